"""Command line: `a2a-probe check URL` (one-shot, for CI/CD). Exit 0 pass, 1 agent failed, 2 usage/config."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from pydantic import SecretStr, ValidationError

from probe import __version__, logs, offline, report
from probe.checks.catalogue import Severity
from probe.config import ConfigError, Settings
from probe.config import load as load_config
from probe.daemon import Daemon
from probe.engine import FULL_STEPS, run_probe
from probe.results import ProbeResult
from probe.suite import SuiteOptions, run_suite
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
    c.add_argument("--suite", choices=["basic", "full"], default="basic",
                   help="basic: discover, validate, invoke, stream; full: every conformance check")
    c.add_argument("--safe-only", action="store_true",
                   help="with --suite full: only checks that start no agent work")
    c.add_argument("--slow-prompt", help="text that keeps a task running (enables the cancel and subscribe checks)")
    c.add_argument("--input-prompt", help="text that makes the agent ask for input (enables the multi-turn check)")
    c.add_argument("--peer", metavar="URL", help="a second agent for the interop checks")
    c.add_argument("--delegation-prompt", help="text that makes this agent call the peer (interop.delegation)")
    c.add_argument("--delegation-expect", help="text the delegated answer must contain")
    c.add_argument("--suite-timeout", type=float, default=120.0,
                   help="time budget of the full suite (including the basic probe), seconds")
    c.add_argument("--fail-on", choices=["verdict", "must", "any", "never"],
                   help="exit 1 when: the probe failed (verdict; default for --suite basic), or also a MUST check "
                        "failed (must; default for --suite full), or any check failed (any); never: always 0")
    c.add_argument("--format", choices=["text", "json", "markdown", "junit"], default="text")
    c.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    c.add_argument("-v", "--verbose", action="store_true", help="list every check, not only failures")

    r = sub.add_parser("run", help="run the probe daemon (scheduled probing, /metrics, /probe, /report)")
    r.add_argument("--config", dest="config_file", help="probe config YAML (env A2A_PROBE_CONFIG_FILE)")
    r.add_argument("--shard", metavar="I/N", help="probe only shard I of N of the agents (rendezvous hash of the "
                                                  "name); ordinal/N takes I from the StatefulSet pod name "
                                                  "(env A2A_PROBE_SHARD)")
    _daemon_flags(r)

    d = sub.add_parser("demo", help="run the daemon against two bundled agents (one healthy, one broken)")
    _daemon_flags(d, default_listen="127.0.0.1:9470")

    cfg = sub.add_parser("config", help="configuration tools")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    cc = cfg_sub.add_parser("check", help="validate a config file and exit (0 valid, 2 invalid)")
    cc.add_argument("file")

    offline.add_parser(sub)
    return p


def _daemon_flags(p: argparse.ArgumentParser, default_listen: str | None = None) -> None:
    p.add_argument("--listen-address", default=default_listen, help="host:port (env A2A_PROBE_LISTEN_ADDRESS)")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", choices=["json", "console", "auto"])
    p.add_argument("--max-concurrency", type=int)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Environment (A2A_PROBE_*) first, CLI flags over it."""
    overrides = {k: v for k in ("config_file", "listen_address", "log_level", "log_format", "max_concurrency",
                                                    "shard")
                 if (v := getattr(args, k, None)) is not None}
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise UsageError("settings: " + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                                  for e in exc.errors())) from None


def cmd_run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    logs.configure(settings.log_level, settings.log_format)
    try:
        daemon = Daemon.from_file(settings)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    asyncio.run(daemon.serve())
    return EXIT_PASS


def cmd_demo(args: argparse.Namespace) -> int:
    from probe.demo.run import run_demo

    settings = settings_from_args(args)
    logs.configure(settings.log_level, settings.log_format)
    asyncio.run(run_demo(settings))
    return EXIT_PASS


def cmd_config(args: argparse.Namespace) -> int:
    try:
        config, _ = load_config(args.file)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    jobs = sum(len(a.modules) for a in config.agents)
    print(f"{args.file}: valid — {len(config.agents)} agent(s), {jobs} job(s), "
          f"modules {sorted(config.all_modules())}")
    return EXIT_PASS


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


def suite_options(args: argparse.Namespace, target: Target) -> SuiteOptions | None:
    if args.suite != "full":
        if args.safe_only or args.peer or args.slow_prompt or args.input_prompt:
            raise UsageError("--safe-only, --peer, --slow-prompt and --input-prompt need --suite full")
        return None
    peer = target.model_copy(update={"name": args.peer, "url": args.peer, "card_url": None}) if args.peer else None
    return SuiteOptions(safe_only=args.safe_only, slow_prompt=args.slow_prompt, input_prompt=args.input_prompt,
                        timeout=args.suite_timeout, peer=peer, delegation_prompt=args.delegation_prompt,
                        delegation_expect=args.delegation_expect)


async def _check(target: Target, stream: bool, progress: bool, suite: SuiteOptions | None) -> ProbeResult:
    async with HttpClient() as client:
        work = (run_suite(target, client, suite) if suite is not None
                else run_probe(target, client, steps=FULL_STEPS if stream else FULL_STEPS[:1]))
        task = asyncio.create_task(work)
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
    suite = suite_options(args, target)
    progress = args.format == "text" and not args.output and sys.stderr.isatty()
    result = asyncio.run(_check(target, not args.no_stream, progress, suite))
    rendered = (report.to_text(result, verbose=args.verbose) if args.format == "text"
                else report.render(result, args.format))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(rendered + "\n")
        except OSError as exc:
            print(rendered)  # the result is never lost to an output error
            raise UsageError(f"--output {args.output}: {exc.strerror}") from None
    else:
        print(rendered)
    return EXIT_FAIL if failed(result, args.fail_on or ("must" if suite else "verdict")) else EXIT_PASS


def failed(result: ProbeResult, policy: str) -> bool:
    """The exit-code policy of `check --fail-on`."""
    if policy == "never":
        return False
    bad = result.failed_checks()
    if policy == "any":
        return not result.success or bool(bad)
    if policy == "must":
        return not result.success or any(c.severity is Severity.MUST for c in bad)
    return not result.success


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        commands = {"check": cmd_check, "run": cmd_run, "demo": cmd_demo, "config": cmd_config,
                    "validate": offline.cmd_validate}
        return commands[args.command](args)
    except UsageError as exc:
        print(f"a2a-probe: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
