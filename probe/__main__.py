from __future__ import annotations

from probe.cli import main

raise SystemExit(main())
