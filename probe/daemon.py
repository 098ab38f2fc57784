"""`a2a-probe run`: wire config, scheduler, runner, metrics and web server; reload; drain on SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
from pathlib import Path

import structlog
from aiohttp import web

from probe import config as cfg
from probe import logs
from probe.admission import Governor
from probe.history import History
from probe.inbox import PushInbox
from probe.metrics import Metrics
from probe.runner import Runner, auto_concurrency
from probe.scheduler import ProbeScheduler, split_job_id
from probe.selfmon import SelfMonitor
from probe.web import make_app
from probe.webguard import GuardedRunner, WebAuth, connection_limit, tls_context
from probe.wire.egress import Egress
from probe.wire.http import HttpClient

log = structlog.get_logger("a2a_probe.daemon")


class ListenError(Exception):
    """The listen address cannot be bound (in use, not permitted, no such address)."""


class Daemon:
    def __init__(self, settings: cfg.Settings, config: cfg.ProbeConfig, config_sha: str = "",
                 config_path: Path | None = None) -> None:
        cfg.require_push_url(config, settings)
        self.settings = settings
        self.config = config
        self.config_sha = config_sha
        self.config_path = config_path
        self.shard = settings.shard_spec()
        self.metrics = Metrics(config.metrics.duration_buckets, config.metrics.agent_info_labels, str(self.shard))
        self.history = History(settings.history_limit)
        # the push receiver lives on the daemon's own web server (route /-/push/<token>)
        self.inbox = PushInbox(settings.push_public_url or "", on_refused=self.metrics.push_refused,
                               body_timeout=settings.web_header_timeout)
        self.metrics.gauge("push_receiver_registrations").set_function(lambda: len(self.inbox))
        slots = settings.max_concurrency or auto_concurrency(self.share(config))
        sockets = settings.max_connections or max(100, 2 * slots)
        self.client = HttpClient(limit=sockets, limit_per_host=settings.max_connections_per_origin or sockets)
        self.runner = Runner(self.client, self.metrics, self.history, slots,
                             self.inbox if settings.push_public_url else None)
        # caller-chosen URLs (/probe?target=) go through their own client, bounded by the egress policy
        self.target_client = HttpClient(limit=sockets, egress=Egress.build(
            settings.probe_target_pattern, settings.probe_target_networks))
        self.web_auth = WebAuth(settings.web_auth_bearer_file, settings.web_auth_basic_file)
        self.tls = tls_context(settings.web_tls_cert_file, settings.web_tls_key_file)
        # runs due while every slot is busy wait in the runner's queue as small entries, not as tasks (probe/runner.py)
        self.scheduler = ProbeScheduler(self.runner.scheduled, self.metrics.missed, settings.first_pass_rate,
                                        gate=self.runner)
        # while the loop is the bottleneck, fewer runs at once (probe/admission.py)
        self.governor = Governor(self.runner.slots)
        self.selfmon = SelfMonitor(self.metrics, on_lag=self.governor.sample)
        self.runner.stall_clock = self.selfmon.stalled_seconds  # a run stalled by the probe is not the agent's
        self._web: GuardedRunner | None = None
        self._stop = asyncio.Event()
        self._reload_lock = asyncio.Lock()
        self.bound: list[str] = []
        self._settled: asyncio.TimerHandle | None = None
        self.mine: set[str] = set()  # names of the agents this replica schedules (its shard of the config)

    @classmethod
    def from_file(cls, settings: cfg.Settings) -> Daemon:
        if settings.config_file is None:
            raise cfg.ConfigError("no config file: pass --config FILE or set A2A_PROBE_CONFIG_FILE")
        config, sha = cfg.load(settings.config_file)
        return cls(settings, config, sha, settings.config_file)

    async def start(self) -> None:
        """Bind the listen address first: a busy port must fail before any probe is scheduled."""
        # bounded connections: a flood of idle callers must not take the descriptors the probe's own sockets need
        self._web = GuardedRunner(make_app(self), max_connections=connection_limit(self.settings.web_max_connections),
                                  header_timeout=self.settings.web_header_timeout, refused=self.metrics.web_refused,
                                  keepalive_timeout=self.settings.web_keepalive_timeout, access_log=None,
                                  handle_signals=False)
        await self._web.setup()
        runner = self._web
        self.metrics.gauge("web_connections").set_function(lambda: runner.open_connections)
        host, port = self.settings.host_port
        site = self._web.site(host, port, self.tls)  # TLS connections counted from accept, not handshake
        try:
            await site.start()
        except OSError as exc:
            await self._web.cleanup()
            self._web = None
            await self.client.close()
            await self.target_client.close()
            cause = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise ListenError(f"cannot listen on {self.settings.listen_address}: {cause} "
                              "(another process has the port? pick one with --listen-address)") from None
        self.bound = [f"{a[0]}:{a[1]}" for a in _addresses(site)]
        self.selfmon.start()
        loop = asyncio.get_running_loop()
        self.metrics.gauge("asyncio_tasks").set_function(lambda: len(asyncio.all_tasks(loop)))
        self._apply(self.config)
        self.metrics.config_loaded(True, len(self.mine))
        self.scheduler.start()
        self.selfmon.freeze()
        fixed_mmap_threshold()
        # once every job has run (one interval and a timeout), its lasting state exists (history rings, series):
        # freeze it too, so full collections stop walking the whole fleet (50,000 agents: a 180 ms pause each)
        modules = self.share(self.config).all_modules()
        used = {m for a in self.share(self.config).agents for m in a.modules}
        settle = max((modules[m].interval + modules[m].timeout for m in used), default=0.0)
        self._settled = asyncio.get_running_loop().call_later(settle, self.selfmon.freeze, False) if settle else None
        logs.batch()  # log lines in batches while the daemon runs (probe/logs.py); `stop` writes what is kept
        log.info("daemon_started", listen=self.bound, agents=len(self.config.agents), shard=str(self.shard),
                 jobs=len(self.scheduler.jobs), config=str(self.config_path or "(embedded)"))
        self._warn_insecure(self.config)

    @staticmethod
    def _warn_insecure(config: cfg.ProbeConfig) -> None:
        """Certificate verification is never silently off: every agent that turns it off is named at start."""
        for agent in config.agents:
            if agent.tls.insecure_skip_verify:
                log.warning("tls_verification_disabled", agent=agent.name,
                            detail="tls.insecure_skip_verify: the agent's certificate is not verified")

    def _apply(self, full: cfg.ProbeConfig) -> None:
        # /probe and /report still find every agent in the file; only this shard's agents are scheduled
        config = self.share(full)
        changed, removed = self.scheduler.sync(config)
        modules = config.all_modules()
        for jid in removed:
            agent, module = split_job_id(jid)
            self.metrics.remove_job(agent, module)
            self.history.forget(agent, module)
        mine = {a.name for a in config.agents}
        for gone in self.mine - mine:
            self.metrics.remove_agent(gone)
        self.mine = mine
        # cached cards: agents that left lose theirs; a changed agent's entry no longer matches its key (cardcache)
        self.runner.cards.retain(mine)
        self.runner.cards.default_max_age = full.card_cache_max_age
        for jid in changed:
            agent_spec, module, _ = self.scheduler.jobs[jid]
            self.metrics.add_job(agent_spec.name, module, modules[module].interval, modules[module].timeout,
                                 config.detailed(agent_spec, module))
        push_jobs = set(config.push_jobs())
        for jid in changed:
            if split_job_id(jid) in push_jobs:
                self.metrics.add_push_job(*split_job_id(jid))
        for a in config.agents:
            self.metrics.set_agent_info(a.name, a.labels)
        self.config = full
        self.metrics.gauge("agents_configured").set(len(config.agents))
        if self.settings.max_concurrency is None:
            self.runner.resize(auto_concurrency(config))

    def share(self, config: cfg.ProbeConfig) -> cfg.ProbeConfig:
        """The part of the config this replica probes (all of it unless --shard splits the fleet)."""
        if self.shard.count == 1:
            return config
        return config.model_copy(update={"agents": [a for a in config.agents if self.shard.owns(a.name)]})

    async def reload(self) -> tuple[bool, str]:
        """Re-read the config file; a bad file keeps the old config running and sets the reload gauge to 0."""
        async with self._reload_lock:
            if self.config_path is None:
                return False, "this daemon runs an embedded config; there is no file to reload"
            try:
                new, sha = cfg.load(self.config_path)
                cfg.require_push_url(new, self.settings)
                if new.metrics != self.config.metrics:
                    raise cfg.ConfigError(f"{self.config_path}: the metrics section changed; that needs a restart")
            except cfg.ConfigError as exc:
                self.metrics.config_loaded(False)
                log.error("config_reload_failed", error=str(exc))
                return False, f"reload failed, keeping the previous config:\n{exc}"
            if sha == self.config_sha:
                self.metrics.config_loaded(True)
                return True, "config unchanged"
            self._apply(new)
            # the dropped agents' state may hold cycles, frozen: the next full collection frees them and freezes
            # what survives (the new config's objects with it)
            self.selfmon.thaw()
            self.config_sha = sha
            self.metrics.config_loaded(True, len(self.mine))
            log.info("config_reloaded", agents=len(new.agents), jobs=len(self.scheduler.jobs))
            self._warn_insecure(new)
            return True, f"config reloaded: {len(new.agents)} agent(s), {len(self.scheduler.jobs)} job(s)"

    def request_stop(self) -> None:
        self._stop.set()

    async def stop(self) -> None:
        """Stop scheduling, let in-flight probes finish within drain_timeout, then close everything."""
        self.scheduler.pause()  # shutdown() would cancel running jobs; pausing only stops new ones
        pending = set(self.runner.in_flight)
        if pending:
            log.info("draining", in_flight=len(pending), timeout=self.settings.drain_timeout)
            _, still = await asyncio.wait(pending, timeout=self.settings.drain_timeout)
            for task in still:
                task.cancel()
            if still:
                await asyncio.wait(still, timeout=1.0)
        self.scheduler.shutdown()
        if self._settled is not None:
            self._settled.cancel()
        if self._web is not None:
            await self._web.cleanup()
        await self.client.close()
        await self.target_client.close()
        await self.selfmon.stop()
        self.metrics.close()
        log.info("daemon_stopped", drained=len(pending))
        logs.unbatch()

    async def serve(self) -> None:
        """Start, then run until SIGTERM/SIGINT; SIGHUP reloads."""
        await self.start()
        await self.serve_started()

    async def serve_started(self) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, self.request_stop)
            loop.add_signal_handler(signal.SIGINT, self.request_stop)
            loop.add_signal_handler(signal.SIGHUP, lambda: asyncio.ensure_future(self.reload()))
        try:
            await self._stop.wait()
        finally:
            try:
                await self.stop()
            finally:
                logs.unbatch()  # whatever stopped the daemon (an error too), no kept line is lost


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's own default, kept fixed


def fixed_mmap_threshold() -> bool:
    """Keep glibc's mmap threshold at its default instead of letting it rise, so large freed blocks leave RSS.

    glibc raises the threshold to the size of each mmapped block freed (up to 32 MiB); from then on blocks of up to
    that size come from the heap, and once freed stay in the process's RSS. A scrape's buffers are such blocks (the
    render's pieces, gzip's output: megabytes at 10,000 agents, tens at 50,000): 10,000 agents held +35 MiB after
    three scrapes, +1 MiB after five with the threshold fixed (bench/memory.py, docs/performance.md). mallopt fixes
    the trim threshold too. False where the C library has no mallopt (musl's does nothing)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def _addresses(site: web.TCPSite) -> list[tuple[str, int]]:
    server = site._server  # aiohttp exposes the bound sockets only here
    if server is None:
        return []
    return [s.getsockname()[:2] for s in getattr(server, "sockets", [])]
