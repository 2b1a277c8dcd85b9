//! Hosted bots built as WebAssembly components (a Python bot built by componentize-py): they
//! target the world `gangs:bot/bot` of `wit/bot.wit`, one call per decision,
//! `decide(update) -> action`, on a fresh instance. WASI 0.2 is linked because an interpreter
//! imports it, but it reaches nothing of the host: no directory is preopened, sockets and name
//! lookups are refused at call time (the bot sees an error it can print), stdin is empty,
//! stdout and stderr are the bot's log, the clocks are virtual and the random bytes come from
//! the game's seed as a module's do. A sleep returns at once and moves the virtual clock on.

use crate::wasi::Limits;
use crate::{random, Budget, Decision, Fault, Refusal, MAX_STDERR_BYTES, MAX_STDOUT_BYTES};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, Resource, ResourceTable};
use wasmtime::{Engine, StoreContextMut};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{
    subscribe, DynPollable, OutputStream, Pollable, StreamError, StreamResult,
};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView};

/// The world a component must target, as its WIT names it.
pub const WORLD: &str = "gangs:bot/bot@1.0.0";
/// Its one export: `decide: func(update: string) -> string`.
pub const EXPORT: &str = "decide";
/// The interface whose sleeps are virtual (its version: the WASI 0.2 release the host links;
/// a component importing an older 0.2 release is served by it).
const MONOTONIC_CLOCK: &str = "wasi:clocks/monotonic-clock@0.2.6";
/// Each clock read moves the virtual clock on by this much: time passes, the same way on
/// every rerun.
const TICK_NS: u64 = 1_000;

/// Whether `bytes` are a component (the binary format's layer 1) rather than a core module.
pub fn is_component(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[4..8] == [0x0d, 0x00, 0x01, 0x00]
}

/// One decision's state.
pub struct Context {
    wasi: WasiCtx,
    table: ResourceTable,
    pub limits: Limits,
    clock: VirtualClock,
    pub log: LogPipe,
}

impl wasmtime_wasi::WasiView for Context {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl Context {
    pub fn new(decision: &Decision<'_>, budget: &Budget) -> Context {
        let clock = VirtualClock::default();
        let log = LogPipe::default();
        let mut stream = random::Stream::new(decision);
        let mut seed = [0u8; 16];
        stream.fill(&mut seed);
        let wasi = WasiCtxBuilder::new()
            .stdout(log.clone())
            .stderr(log.clone())
            .wall_clock(WallClock {
                start_ns: decision.clock_ns,
                clock: clock.clone(),
            })
            .monotonic_clock(clock.clone())
            .secure_random(SeededRandom(stream))
            .insecure_random(SeededRandom(random::Stream::new(decision)))
            .insecure_random_seed(u128::from_le_bytes(seed))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .args(&["bot"])
            .build();
        Context {
            wasi,
            table: ResourceTable::new(),
            limits: Limits::component(budget.memory_bytes),
            clock,
            log,
        }
    }
}

/// The engine's WASI 0.2, its sleeps made virtual.
pub fn linker(engine: &Engine) -> wasmtime::Result<Linker<Context>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    linker.allow_shadowing(true);
    // The interface is defined again whole: the linker replaces an instance, not a function.
    let mut clocks = linker.instance(MONOTONIC_CLOCK)?;
    clocks.func_wrap("now", |store: StoreContextMut<'_, Context>, (): ()| {
        Ok((store.data().clock.tick(),))
    })?;
    clocks.func_wrap("resolution", |_: StoreContextMut<'_, Context>, (): ()| {
        Ok((1u64,))
    })?;
    clocks.func_wrap(
        "subscribe-duration",
        |mut store: StoreContextMut<'_, Context>, (duration,): (u64,)| {
            store.data().clock.advance(duration);
            slept(store.data_mut())
        },
    )?;
    clocks.func_wrap(
        "subscribe-instant",
        |mut store: StoreContextMut<'_, Context>, (when,): (u64,)| {
            store.data().clock.advance_to(when);
            slept(store.data_mut())
        },
    )?;
    Ok(linker)
}

/// A pollable that is ready at once: the end of a virtual sleep.
struct Ready;

#[wasmtime_wasi::async_trait]
impl Pollable for Ready {
    async fn ready(&mut self) {}
}

/// A sleep's pollable, ready at once (the virtual clock has moved on already).
fn slept(context: &mut Context) -> wasmtime::Result<(Resource<DynPollable>,)> {
    let sleep = context.table.push(Ready)?;
    Ok((subscribe(&mut context.table, sleep)?,))
}

/// Refuses a component that is not a bot of the world [`WORLD`]: it must export `decide`, a
/// function, and import nothing but WASI 0.2. Names what it has instead.
pub fn check_world(engine: &Engine, component: &Component) -> Result<(), Refusal> {
    let ty = component.component_type();
    for (name, _) in ty.imports(engine) {
        if !name.starts_with("wasi:") {
            return Err(Refusal(format!(
                "the component imports `{name}`: a hosted bot's component may import only WASI 0.2 interfaces (wasi:...)"
            )));
        }
    }
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let decide = ty
        .exports(engine)
        .find(|(name, _)| *name == EXPORT)
        .map(|(_, item)| item);
    let expected = format!(
        "a hosted bot's component targets the world {WORLD} (export {EXPORT}: func(update: string) -> string; hosted/wit/bot.wit)"
    );
    match decide {
        Some(ComponentItem::ComponentFunc(func)) => {
            let params: Vec<_> = func.params().map(|(_, ty)| ty).collect();
            let results: Vec<_> = func.results().collect();
            let string =
                |ty: &wasmtime::component::Type| matches!(ty, wasmtime::component::Type::String);
            if params.len() != 1
                || !string(&params[0])
                || results.len() != 1
                || !string(&results[0])
            {
                return Err(Refusal(format!(
                    "the component's `{EXPORT}` is not func(update: string) -> string: {expected}"
                )));
            }
        }
        _ => {
            let world = if exports.iter().any(|e| e.starts_with("wasi:cli/run")) {
                "it is a WASI command (it exports wasi:cli/run): ".to_string()
            } else {
                String::new()
            };
            return Err(Refusal(format!(
                "the component exports {}: {world}{expected}",
                if exports.is_empty() {
                    "nothing".to_string()
                } else {
                    exports.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// The virtual clock of one decision: nanoseconds since it began, moved on by every read and
/// every sleep.
#[derive(Clone, Default)]
struct VirtualClock(Arc<AtomicU64>);

impl VirtualClock {
    fn advance(&self, ns: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                Some(now.saturating_add(ns))
            });
    }

    fn advance_to(&self, ns: u64) {
        self.0.fetch_max(ns, Ordering::Relaxed);
    }

    fn tick(&self) -> u64 {
        self.advance(TICK_NS);
        self.0.load(Ordering::Relaxed)
    }
}

impl HostMonotonicClock for VirtualClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        self.tick()
    }
}

/// Wall time: the logged record's time plus the virtual clock.
struct WallClock {
    start_ns: u64,
    clock: VirtualClock,
}

impl HostWallClock for WallClock {
    fn resolution(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(1)
    }
    fn now(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.start_ns.saturating_add(self.clock.tick()))
    }
}

/// The decision's random bytes ([`random::Stream`]) as WASI's random source.
struct SeededRandom(random::Stream);

impl rand_core::RngCore for SeededRandom {
    fn next_u32(&mut self) -> u32 {
        let mut bytes = [0; 4];
        self.0.fill(&mut bytes);
        u32::from_le_bytes(bytes)
    }
    fn next_u64(&mut self) -> u64 {
        let mut bytes = [0; 8];
        self.0.fill(&mut bytes);
        u64::from_le_bytes(bytes)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill(dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill(dest);
        Ok(())
    }
}

/// stdout and stderr together: the bot's log, its first [`MAX_STDERR_BYTES`] kept, the rest
/// accepted and dropped (a chatty bot is not stopped for it).
#[derive(Clone, Default)]
pub struct LogPipe(Arc<Mutex<Vec<u8>>>);

impl LogPipe {
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl IsTerminal for LogPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl LogPipe {
    fn keep(&self, bytes: &[u8]) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let room = MAX_STDERR_BYTES.saturating_sub(log.len());
        log.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl OutputStream for LogPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.keep(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(MAX_STDOUT_BYTES)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for LogPipe {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for LogPipe {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.keep(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The answer `decide` returned: its first line, without a carriage return; bad output when it
/// is empty or longer than [`MAX_STDOUT_BYTES`].
pub fn answer(returned: String) -> Result<String, Fault> {
    if returned.len() > MAX_STDOUT_BYTES {
        return Err(Fault::BadOutput(format!(
            "`{EXPORT}` returned {} bytes: at most {MAX_STDOUT_BYTES}",
            returned.len()
        )));
    }
    let line = returned.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.trim().is_empty() {
        return Err(Fault::BadOutput(format!(
            "`{EXPORT}` returned no action (an empty string)"
        )));
    }
    Ok(line.to_string())
}
