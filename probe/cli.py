"""Command line: `a2a-probe check URL` (one-shot, for CI/CD). Exit 0 pass, 1 agent failed, 2 usage/config."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from pydantic import SecretStr, ValidationError

from probe import __version__, report
from probe.engine import FULL_STEPS, run_probe
from probe.results import ProbeResult
from probe.target import Target
from probe.wire.http import HttpClient

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="a2a-probe", description="Probe A2A agents end to end.")
    p.add_argument("--version", action="version", version=f"a2a-probe {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="probe one agent once: discover, validate, invoke, stream")
    c.add_argument("url", help="the agent's base URL (may carry a gateway path prefix) or its card URL")
    c.add_argument("--card-url", help="explicit Agent Card URL (default: <url>/.well-known/agent-card.json)")
    c.add_argument("--bearer-token-env", metavar="VAR", help="read a bearer token from this environment variable")
    c.add_argument("--header", action="append", default=[], metavar="K=V",
                   help="extra header on invocation requests (repeatable; never sent during discovery)")
    c.add_argument("--a2a-version", choices=["1.0", "0.3"], help="force the protocol version of the interface")
    c.add_argument("--message", default="a2a-probe health check", help="text of the probe message")
    c.add_argument("--expect-text", help="fail unless this text appears in the answer")
    c.add_argument("--timeout", type=float, default=30.0, help="hard deadline for the whole probe, seconds")
    c.add_argument("--allow-cross-origin-redirect", action="store_true",
                   help="follow a cross-origin card redirect (credentials are still never forwarded)")
    c.add_argument("--no-stream", action="store_true", help="skip SendStreamingMessage")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    c.add_argument("-v", "--verbose", action="store_true", help="list every check, not only failures")
    return p


def target_from_args(args: argparse.Namespace) -> Target:
    headers: dict[str, SecretStr] = {}
    for h in args.header:
        key, sep, value = h.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--header {h!r}: expected K=V")
        headers[key.strip()] = SecretStr(value)
    if args.bearer_token_env:
        token = os.environ.get(args.bearer_token_env)
        if not token:
            raise UsageError(f"--bearer-token-env: environment variable {args.bearer_token_env} is not set or empty")
        headers["Authorization"] = SecretStr(f"Bearer {token}")
    try:
        return Target(name=args.url, url=args.url, card_url=args.card_url, headers=headers,
                      a2a_version=args.a2a_version, message=args.message, expect_text=args.expect_text,
                      timeout=args.timeout, allow_cross_origin_redirect=args.allow_cross_origin_redirect)
    except ValidationError as exc:
        raise UsageError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None


async def _check(target: Target, stream: bool, progress: bool) -> ProbeResult:
    async with HttpClient() as client:
        task = asyncio.create_task(run_probe(target, client, steps=FULL_STEPS if stream else FULL_STEPS[:1]))
        if progress:
            await _spin(task, target.url)
        return await task


async def _spin(task: asyncio.Task[ProbeResult], label: str) -> None:
    frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    i = 0
    while not task.done():
        sys.stderr.write(f"\r{frames[i % len(frames)]} probing {label[:60]} …")
        sys.stderr.flush()
        i += 1
        await asyncio.wait({task}, timeout=0.1)
    sys.stderr.write("\r\033[K")
    sys.stderr.flush()


def cmd_check(args: argparse.Namespace) -> int:
    target = target_from_args(args)
    progress = args.format == "text" and not args.output and sys.stderr.isatty()
    result = asyncio.run(_check(target, not args.no_stream, progress))
    rendered = report.to_json(result) if args.format == "json" else report.to_text(result, verbose=args.verbose)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(rendered + "\n")
        except OSError as exc:
            print(rendered)  # the result is never lost to an output error
            raise UsageError(f"--output {args.output}: {exc.strerror}") from None
    else:
        print(rendered)
    return EXIT_PASS if result.success else EXIT_FAIL


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return {"check": cmd_check}[args.command](args)
    except UsageError as exc:
        print(f"a2a-probe: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
