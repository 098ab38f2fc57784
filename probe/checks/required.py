"""invoke.required_fields: the fields the version's definitions mark REQUIRED are present in the agent's answers.

1.0 §5.7: "Fields marked with `[(google.api.field_behavior) = REQUIRED]` indicate that the field **MUST** be present
and set … Arrays marked as required **MUST** contain at least one element"; a one-of the proto defines holds exactly
one member. The official clients read past all of it: a2a-sdk parses with protobuf's json_format, which does not
enforce field_behavior (a missing `messageId` is "", a Part with no content an empty Part, `parts: []` no parts), so
an answer that breaks only these rules is read, its calls work, and `invoke.schema` / `stream.schema` (what the
official parsers refuse) pass it. This check reports them of its own, as `invoke.timestamps_utc` does: a finding
that counts for the conformance level and `--fail-on must`, never for the verdict (no step fails for it). Found by
the differential harness (tests/differential), which reads every mutant with a2a-sdk's client too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from probe.checks.catalogue import record_finding
from probe.results import ProbeResult

CHECK = "invoke.required_fields"
_MAX_SHOWN = 5
PASSED = "every REQUIRED field of the answers judged is present"
NONE_SEEN = "no answer judged against a proto"


@dataclass(slots=True)
class RequiredLog:
    """The REQUIRED fields missing from one run's answers: how many answers, and the first few gaps."""

    seen: int = 0
    missing: int = 0
    shown: list[str] = field(default_factory=list)

    def see(self, required: list[str], where: str) -> None:
        """One judged answer and its gaps (schema.Verdict.required); `where` names it ("SendMessage", "event 3")."""
        self.seen += 1
        self.missing += len(required)
        for gap in required:
            if len(self.shown) < _MAX_SHOWN:
                self.shown.append(gap if gap.startswith(where) else f"{where}: {gap}")

    def record(self, result: ProbeResult) -> None:
        """The check, in place of an earlier record of it (the suite's own calls add to the engine's)."""
        failure = None
        if self.missing:
            more = f" … (+{self.missing - len(self.shown)} more)" if self.missing > len(self.shown) else ""
            failure = f"{'; '.join(self.shown)}{more} (the official clients read past these: the calls work)"
        record_finding(result, CHECK, failure, seen=bool(self.seen), passed=PASSED, none_seen=NONE_SEEN)
