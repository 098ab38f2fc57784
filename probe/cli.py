"""Command line: `a2a-probe check URL` (one-shot, for CI/CD). Exit 0 pass, 1 agent failed, 2 usage/config.

Whatever a person types, the answer is an exit code and (on an error) one line on stderr, never a traceback;
stdout carries only the report, so `--format json` stays JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from pydantic import SecretStr, ValidationError

from probe import __version__, logs, offline, redact, report
from probe.checks.catalogue import Severity
from probe.config import CardSignatures, ConfigError, Settings, check_public_url
from probe.config import load as load_config
from probe.daemon import Daemon, ListenError
from probe.engine import FULL_STEPS, run_interfaces, run_probe
from probe.inbox import Listener
from probe.results import ProbeResult
from probe.suite import SuiteOptions, run_suite, run_suite_interfaces
from probe.target import AuthSpec, InvalidUrl, Target, TlsSpec, check_url
from probe.wire.http import HttpClient

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_CODES = (f"exit codes: {EXIT_PASS} the agent passed; {EXIT_FAIL} the agent failed (see --fail-on); "
              f"{EXIT_USAGE} usage or config error (bad URL, bad option, unreadable file)")


class UsageError(Exception):
    pass


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows every real default (not None/False), and keeps the epilog's line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS, []) and "default" not in text:
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (which command, what is wrong, where help is), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

# --binding value (the registry name, as in metrics) -> the card's protocolBinding
BINDING_CHOICES = {"jsonrpc": "JSONRPC", "http_json": "HTTP+JSON", "grpc": "GRPC"}


def positive(value: str) -> float:
    """argparse type: a number of seconds > 0."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a number of seconds") from None
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value[:40]}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="a2a-probe", description="Probe A2A agents end to end.")
    p.add_argument("--version", action="version", version=f"a2a-probe {__version__}")
    p.set_defaults(parser=p)
    sub = p.add_subparsers(dest="command", metavar="{check,run,demo,config,validate}", parser_class=Parser)
    c = sub.add_parser("check", help="probe one agent once: discover, validate, invoke, stream",
                       description="Probe one agent once, as a real client would, and print a report.",
                       epilog=EXIT_CODES, formatter_class=_Formatter)
    c.add_argument("url", help="the agent's base URL (may carry a gateway path prefix) or its card URL")
    c.add_argument("--card-url", help="explicit Agent Card URL (default: <url>/.well-known/agent-card.json)")
    c.add_argument("--bearer-token-env", metavar="VAR", help="read a bearer token from this environment variable")
    c.add_argument("--allowed-origin", action="append", default=[], metavar="URL",
                   help="another origin that may receive the credentials: an advertised interface on another host "
                        "or port, e.g. http://host:50051 for a gRPC one (repeatable; the agent's own always may)")
    c.add_argument("--header", action="append", default=[], metavar="K=V",
                   help="extra header on invocation requests (repeatable; never sent during discovery)")
    c.add_argument("--other-bearer-token-env", metavar="VAR",
                   help="with --suite full: a second identity's bearer token, from this environment variable: another "
                        "caller the agent must keep apart from the first (security.scoped_access)")
    c.add_argument("--other-header", action="append", default=[], metavar="K=V",
                   help="with --suite full: a header of the second identity (repeatable; sent only where the first "
                        "identity's credentials may go, in place of a first-identity header of that name)")
    c.add_argument("--a2a-version", choices=["1.0", "0.3"], help="force the protocol version of the interface")
    c.add_argument("--binding", choices=[*BINDING_CHOICES, "all"],
                   help="probe the interface of this binding, or every advertised one (all: one report entry each, "
                        "with --suite full the whole suite on each, and interop.bindings_agree); default: the card's "
                        "JSON-RPC interface, 1.0 first")
    c.add_argument("--message", default="a2a-probe health check", help="text of the probe message")
    c.add_argument("--expect-text", help="fail unless this text appears in the answer")
    c.add_argument("--timeout", type=positive, default=30.0, help="hard deadline for the whole probe, seconds")
    c.add_argument("--allow-cross-origin-redirect", action="store_true",
                   help="follow a cross-origin card redirect (credentials are still never forwarded)")
    c.add_argument("--ca-bundle", metavar="FILE", help="PEM CA bundle to trust for this agent (a private CA)")
    c.add_argument("--client-cert", metavar="FILE", help="PEM client certificate for mTLS (the key in it, or "
                                                        "--client-key)")
    c.add_argument("--client-key", metavar="FILE", help="PEM key of --client-cert")
    c.add_argument("--insecure-skip-verify", action="store_true",
                   help="do not verify the agent's TLS certificate (reported as a failed tls.verified check)")
    c.add_argument("--trusted-jwks", metavar="FILE",
                   help="a JWK Set of public keys the card must be signed with (never a key the card points to)")
    c.add_argument("--signature-policy", choices=["require", "verify", "off"],
                   help="require: unsigned or unverified fails the probe; verify: findings only "
                        "(default with --trusted-jwks); off (default without)")
    c.add_argument("--no-stream", action="store_true", help="skip SendStreamingMessage")
    c.add_argument("--suite", choices=["basic", "full"], default="basic",
                   help="basic: discover, validate, invoke, stream; full: every conformance check")
    c.add_argument("--safe-only", action="store_true",
                   help="with --suite full: only checks that start no agent work")
    c.add_argument("--slow-prompt",
                   help="text that keeps a task running (enables the cancel, subscribe and multi-stream checks)")
    c.add_argument("--input-prompt",
                   help="text that makes the agent ask for input (enables the multi-turn check; history of two turns)")
    c.add_argument("--peer", metavar="URL", help="a second agent for the interop checks")
    c.add_argument("--delegation-prompt", help="text that makes this agent call the peer (interop.delegation)")
    c.add_argument("--delegation-expect", help="text the delegated answer must contain")
    c.add_argument("--push-listen", metavar="HOST:PORT", default="127.0.0.1:0",
                   help="with --suite full: where the push receiver listens (default loopback, an ephemeral port)")
    c.add_argument("--push-url", metavar="URL",
                   help="with --suite full: the receiver's URL as the agent must call it, when that differs from "
                        "--push-listen (NAT, a cluster, a tunnel); webhooks are <URL>/-/push/<token>")
    c.add_argument("--suite-timeout", type=positive, default=120.0,
                   help="time budget of the full suite (including the basic probe), seconds")
    c.add_argument("--fail-on", choices=["verdict", "must", "any", "never"],
                   help="exit 1 when: the probe failed (verdict; default for --suite basic), or also a MUST check "
                        "failed (must; default for --suite full), or any check failed (any); never: always 0")
    c.add_argument("--format", choices=["text", "json", "markdown", "junit"], default="text",
                   help="report format on stdout (or in --output)")
    c.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    c.add_argument("-v", "--verbose", action="store_true", help="list every check, not only failures")

    r = sub.add_parser("run", help="run the probe daemon (scheduled probing, /metrics, /probe, /report)",
                       description="Run the probe daemon until SIGTERM or Ctrl-C; SIGHUP reloads the config.",
                       epilog=f"exit codes: {EXIT_PASS} stopped cleanly; {EXIT_USAGE} bad config or settings, "
                              "or the listen address is in use")
    r.add_argument("--config", dest="config_file", help="probe config YAML (env A2A_PROBE_CONFIG_FILE)")
    r.add_argument("--shard", metavar="I/N", help="probe only shard I of N of the agents (rendezvous hash of the "
                                                  "name); ordinal/N takes I from the StatefulSet pod name "
                                                  "(env A2A_PROBE_SHARD)")
    _daemon_flags(r)

    d = sub.add_parser("demo", help="run the daemon against two bundled agents (one healthy, one broken)")
    _daemon_flags(d, default_listen=DEMO_LISTEN)

    cfg = sub.add_parser("config", help="configuration tools", description="Configuration tools.")
    cfg.set_defaults(parser=cfg)
    cfg_sub = cfg.add_subparsers(dest="config_command", metavar="{check}", parser_class=Parser)
    cc = cfg_sub.add_parser("check", help="validate a config file and exit (0 valid, 2 invalid); warns about "
                                          "credentials (env variables, secret files) that are missing here")
    cc.add_argument("file")

    offline.add_parser(cast("argparse._SubParsersAction[argparse.ArgumentParser]", sub))
    return p


DEMO_LISTEN = "127.0.0.1:9470"


def _daemon_flags(p: argparse.ArgumentParser, default_listen: str | None = None) -> None:
    shown = default_listen or Settings.model_fields["listen_address"].default
    p.add_argument("--listen-address", default=default_listen,
                   help=f"host:port to serve on (env A2A_PROBE_LISTEN_ADDRESS; default {shown})")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", choices=["json", "console", "auto"])
    p.add_argument("--max-concurrency", type=int, help="probes running at once (default 16)")
    p.add_argument("--push-public-url", metavar="URL",
                   help="the URL agents reach this daemon at, for push webhooks (env A2A_PROBE_PUSH_PUBLIC_URL; "
                        "required with a push module)")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Environment (A2A_PROBE_*) first, CLI flags over it."""
    overrides = {k: v for k in ("config_file", "listen_address", "log_level", "log_format", "max_concurrency",
                                "shard", "push_public_url")
                 if (v := getattr(args, k, None)) is not None}
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise UsageError("; ".join(_setting_error(e) for e in exc.errors())) from None


def _setting_error(e: Any) -> str:
    """'--max-concurrency (A2A_PROBE_MAX_CONCURRENCY): Input should be greater than or equal to 1'."""
    msg = str(e["msg"]).removeprefix("Value error, ")
    if not e["loc"]:
        return msg
    field = str(e["loc"][0])
    return f"--{field.replace('_', '-')} (A2A_PROBE_{field.upper()}): {msg}"


def cmd_run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    logs.configure(settings.log_level, settings.log_format)
    try:
        daemon = Daemon.from_file(settings)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        asyncio.run(daemon.serve())
    except ListenError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_PASS


def cmd_demo(args: argparse.Namespace) -> int:
    from probe.demo.run import run_demo

    settings = settings_from_args(args)
    logs.configure(settings.log_level, settings.log_format)
    try:
        asyncio.run(run_demo(settings))
    except ListenError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_PASS


def cmd_config(args: argparse.Namespace) -> int:
    try:
        config, _ = load_config(args.file)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    jobs = sum(len(a.modules) for a in config.agents)
    print(f"{args.file}: valid — {len(config.agents)} agent(s), {jobs} job(s), "
          f"modules {sorted(config.all_modules())}")
    for agent in config.agents:  # valid, but these probes would fail here with probe_config_error
        for problem in agent.credential_problems():
            print(f"a2a-probe: warning: agent {agent.name!r}: {problem}", file=sys.stderr)
    return EXIT_PASS


def _url_arg(what: str, url: str | None) -> None:
    if url is not None:
        try:
            check_url(url)
        except InvalidUrl as exc:
            raise UsageError(str(exc) if what == "URL" else f"{what}: {exc}") from None
        redact.register_url(url)  # a token in its query string is never printed


def _tls_from_args(args: argparse.Namespace) -> TlsSpec:
    if args.client_key and not args.client_cert:
        raise UsageError("--client-key needs --client-cert")
    for flag in ("ca_bundle", "client_cert", "client_key"):
        path = getattr(args, flag)
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"--{flag.replace('_', '-')}: {path} is not a readable file")
    return TlsSpec(ca_bundle=args.ca_bundle, client_cert=args.client_cert, client_key=args.client_key,
                   insecure_skip_verify=args.insecure_skip_verify)


def target_from_args(args: argparse.Namespace) -> Target:
    _url_arg("URL", args.url)
    _url_arg("--card-url", args.card_url)
    _url_arg("--peer", args.peer)
    for allowed in args.allowed_origin:
        _url_arg("--allowed-origin", allowed)
    headers = _headers_arg("--header", args.header)
    bearer = _bearer_arg("--bearer-token-env", args.bearer_token_env)
    other_headers = _headers_arg("--other-header", args.other_header)
    other_bearer = _bearer_arg("--other-bearer-token-env", args.other_bearer_token_env)
    other = None
    if other_headers or other_bearer is not None:
        # the config's other_auth: the headers travel with the second identity's flow, origin-bound like auth's
        other = AuthSpec(client_cert=args.client_cert is not None, bearer=other_bearer, headers=other_headers,
                         allowed_origins=tuple(args.allowed_origin))
        if sorted(other.secret_values()) == sorted([*(v.get_secret_value() for k, v in headers.items()
                                                       if redact.is_secret_header(k)),
                                                     *([bearer.get_secret_value()] if bearer else [])]):
            raise UsageError("--other-bearer-token-env / --other-header give the same credentials as the first "
                             "identity: the second identity must be another caller")
    try:
        signatures = CardSignatures(policy=args.signature_policy, trusted_jwks_file=args.trusted_jwks)
        jwks = signatures.resolve()
    except ValidationError as exc:
        raise UsageError("--signature-policy: " + "; ".join(e["msg"].removeprefix("Value error, ")
                                                            for e in exc.errors())) from None
    except ConfigError as exc:
        raise UsageError(f"--trusted-jwks: {exc}") from None
    try:
        return Target(name=args.url, url=args.url, card_url=args.card_url, headers=headers,
                      a2a_version=args.a2a_version, binding=BINDING_CHOICES.get(getattr(args, "binding", None) or ""),
                      message=args.message, expect_text=args.expect_text,
                      timeout=args.timeout, allow_cross_origin_redirect=args.allow_cross_origin_redirect,
                      trusted_jwks=jwks, signature_policy=signatures.effective_policy,
                      tls=_tls_from_args(args), auth=AuthSpec(client_cert=args.client_cert is not None, bearer=bearer,
                                                               allowed_origins=tuple(args.allowed_origin)),
                      other_auth=other)
    except ValidationError as exc:
        raise UsageError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None


def _headers_arg(flag: str, values: list[str]) -> dict[str, SecretStr]:
    headers: dict[str, SecretStr] = {}
    for h in values:
        key, sep, value = h.partition("=")
        if not sep or not key.strip():  # never echo the argument: it may be "Authorization: Bearer …"
            raise UsageError(f"{flag}: expected K=V (a header name, '=', then the value)")
        headers[key.strip()] = SecretStr(value)
        if redact.is_secret_header(key.strip()):
            redact.register(value)
    return headers


def _bearer_arg(flag: str, variable: str | None) -> SecretStr | None:
    if not variable:
        return None
    token = os.environ.get(variable)
    if not token:
        raise UsageError(f"{flag}: environment variable {variable} is not set or empty")
    # the config's auth.bearer_token: matched against the card's schemes, sent to allowed origins only
    redact.register(token)
    return SecretStr(token)


def suite_options(args: argparse.Namespace, target: Target) -> SuiteOptions | None:
    if args.suite != "full":
        if args.safe_only or args.peer or args.slow_prompt or args.input_prompt or args.push_url \
                or args.push_listen != "127.0.0.1:0":
            raise UsageError("--safe-only, --peer, --slow-prompt, --input-prompt, --push-listen and --push-url need "
                             "--suite full")
        if target.other_auth is not None:
            raise UsageError("--other-bearer-token-env and --other-header need --suite full (security.scoped_access)")
        return None
    peer = target.model_copy(update={"name": args.peer, "url": args.peer, "card_url": None}) if args.peer else None
    return SuiteOptions(safe_only=args.safe_only, slow_prompt=args.slow_prompt, input_prompt=args.input_prompt,
                        timeout=args.suite_timeout, peer=peer, delegation_prompt=args.delegation_prompt,
                        delegation_expect=args.delegation_expect)


def push_listener(args: argparse.Namespace) -> Listener:
    """The receiver of `check --suite full`: --push-listen HOST:PORT, announced as --push-url when given."""
    host, sep, port = args.push_listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536 or not host:
        raise UsageError(f"--push-listen {args.push_listen!r}: expected HOST:PORT (port 0 picks a free one)")
    public = None
    if args.push_url:
        try:
            public = check_public_url(args.push_url)
        except ValueError as exc:
            raise UsageError(f"--push-url: {exc}") from None
    return Listener(host.strip("[]"), int(port), public)


async def _check(target: Target, stream: bool, progress: bool, suite: SuiteOptions | None,
                 listener: Listener | None = None, every: bool = False) -> ProbeResult:
    async with HttpClient() as client, contextlib.AsyncExitStack() as stack:
        if suite is not None and listener is not None:
            try:
                suite = dataclasses.replace(suite, inbox=await stack.enter_async_context(listener))
            except OSError as exc:
                raise UsageError(f"--push-listen {listener.host}:{listener.port}: {exc.strerror}") from None
        steps = FULL_STEPS if stream else FULL_STEPS[:1]
        work = (run_suite_interfaces(target, client, suite) if suite is not None and every
                else run_suite(target, client, suite) if suite is not None
                else run_interfaces(target, client, steps=steps) if every
                else run_probe(target, client, steps=steps))
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
    # stdout is the report: warnings go to stderr, one line each, never a traceback
    logs.configure("error", "console", stream=sys.stderr, tracebacks=False)
    target = target_from_args(args)
    suite = suite_options(args, target)
    progress = args.format == "text" and not args.output and sys.stderr.isatty()
    listener = push_listener(args) if suite is not None else None
    result = asyncio.run(_check(target, not args.no_stream, progress, suite, listener, every=args.binding == "all"))
    rendered = redact.text(report.to_text(result, verbose=args.verbose) if args.format == "text"
                           else report.render(result, args.format))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(rendered + "\n")
        except OSError as exc:
            print(rendered)  # the result is never lost to an output error
            raise UsageError(f"--output {args.output}: {exc.strerror}") from None
    else:
        _emit(rendered)
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


def _subcommands(parser: argparse.ArgumentParser) -> str:
    """'usage' plus one line per subcommand, for a command typed without one."""
    lines = [parser.format_usage().rstrip(), "", "commands:"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            lines += [f"  {choice.dest:<10} {choice.help}" for choice in action._choices_actions]
    return "\n".join(lines)


def _emit(text: str) -> None:
    """Print the report; a reader that went away (`| head`) is not an error worth a traceback."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not fail again


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None or (args.command == "config" and args.config_command is None):
        print(_subcommands(args.parser), file=sys.stderr)  # the innermost command typed, with its subcommands
        return EXIT_USAGE
    try:
        commands = {"check": cmd_check, "run": cmd_run, "demo": cmd_demo, "config": cmd_config,
                    "validate": offline.cmd_validate}
        return commands[args.command](args)
    except UsageError as exc:
        print(f"a2a-probe: error: {redact.text(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _emit("")
        return EXIT_FAIL
    except Exception as exc:  # a probe bug: say so in one line; the traceback helps nobody who typed a command
        print(f"a2a-probe: internal error (a probe bug, please report it): {type(exc).__name__}: "
              f"{redact.text(str(exc))}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
