//! Hosted bots: a WebAssembly module (a WASI preview 1 command) that decides one seat's move.
//! For each decision the [`Runner`] instantiates the module afresh, gives it one line of JSON
//! on stdin (the seat's update, without wall-clock fields) and reads one line from stdout,
//! within a [`Budget`] of fuel (instructions) and memory. Everything the module can observe —
//! its input, its virtual clock, its random bytes — comes from the [`Decision`], so the same
//! module, engine and budget answer the same decision with the same bytes: a logged game's
//! decisions can be rerun and compared. The contract in product words: docs/hosted-bots.md.
//!
//! Pure computation, no async: the server runs decisions on its own pool of threads
//! ([`pool::Pool`]), apart from the games' runtime.

pub mod compile;
pub mod component;
pub mod pool;
mod random;
pub mod seat;
mod wasi;

use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::Component;
use wasmtime::{Config, Engine, InstancePre, Linker, Module, Store, Trap};

pub use wasi::{ALLOWED_MODULE, MAX_STDERR_BYTES, MAX_STDOUT_BYTES};

/// The engine and its version, recorded with every hosted bot's version: fuel accounting may
/// change between engine releases, and a rerun must use the engine that made the decision.
pub const ENGINE: &str = "wasmtime 40.0.0";

/// What one decision may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Fuel per decision: about one unit per WebAssembly instruction.
    pub fuel: u64,
    /// Linear memory per instance, in bytes.
    pub memory_bytes: u64,
    /// Wall-clock backstop per decision, for a host too loaded to run the fuel in time: when
    /// it fires the decision is the host's failure ([`Fault::Overload`]), not the bot's.
    pub backstop: Duration,
}

/// The defaults of a ladder's budget (docs/hosted-bots.md).
pub const DEFAULT_FUEL: u64 = 300_000_000;
pub const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;
pub const DEFAULT_MODULE_BYTES: u64 = 8 << 20;
/// A component's size limit: an interpreter and its standard library (a Python bot built by
/// componentize-py is some 18 MiB) are far larger than a compiled C or Rust bot.
pub const DEFAULT_COMPONENT_BYTES: u64 = 40 << 20;

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            fuel: DEFAULT_FUEL,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            backstop: Duration::from_secs(30),
        }
    }
}

/// Everything a decision's module may observe besides its own code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision<'a> {
    /// The line on stdin, without its newline (the host adds it).
    pub input: &'a [u8],
    /// The logged record's time, in nanoseconds since the Unix epoch: the virtual clock
    /// starts there and advances with the fuel used.
    pub clock_ns: u64,
    /// The game's seed: the key of the bot's random bytes (which reveal nothing of it).
    pub seed: u64,
    /// `BOT@VERSION`.
    pub bot: &'a str,
    pub seat: u32,
    /// The seq of the update the decision answers.
    pub seq: u64,
}

/// Why a decision gave no answer. Displayed as the cause's word, then the detail (`trap:
/// unreachable`): the `cause` of the seat's `timed_out` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The fuel ran out.
    Fuel,
    /// The module asked for more memory than the budget.
    Memory,
    /// The module trapped or exited without an answer.
    Trap(String),
    /// The module printed no line, or too much.
    BadOutput(String),
    /// The wall-clock backstop fired: the host was too loaded.
    Overload,
}

impl Fault {
    /// The cause's word, as logged with the seat's timeout: `fuel`, `memory`, `trap`,
    /// `bad output`, `overload`.
    pub fn cause(&self) -> &'static str {
        match self {
            Fault::Fuel => "fuel",
            Fault::Memory => "memory",
            Fault::Trap(_) => "trap",
            Fault::BadOutput(_) => "bad output",
            Fault::Overload => "overload",
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Fuel => write!(f, "fuel: out of fuel (the budget's fuel per decision)"),
            Fault::Memory => write!(f, "memory: out of memory (the budget's memory per instance)"),
            Fault::Trap(why) => write!(f, "trap: {why}"),
            Fault::BadOutput(why) => write!(f, "bad output: {why}"),
            Fault::Overload => write!(
                f,
                "overload: the host was too loaded to run the decision in time (not the bot's fault)"
            ),
        }
    }
}

/// One decision's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The first line the module printed on stdout (without its newline), or why there is none.
    pub answer: Result<String, Fault>,
    pub fuel_used: u64,
    /// What it printed on stderr (at most [`MAX_STDERR_BYTES`]).
    pub stderr: Vec<u8>,
}

/// Why a module cannot be a hosted bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A compiled, checked module or component, ready to run decisions. Cheap to clone.
#[derive(Clone)]
pub struct Bot {
    code: Code,
    /// The module's size in bytes.
    pub size: usize,
}

#[derive(Clone)]
enum Code {
    /// A WASI preview 1 command module.
    Module(InstancePre<wasi::Context>),
    /// A component of the world [`component::WORLD`].
    Component(wasmtime::component::InstancePre<component::Context>),
}

impl Bot {
    /// Whether it is a component (else a core module).
    pub fn is_component(&self) -> bool {
        matches!(self.code, Code::Component(_))
    }
}

/// The engine and the WASI functions every module and component is linked against. Cheap to
/// clone; one per process (the epoch ticker behind the backstop is one thread).
#[derive(Clone)]
pub struct Runner {
    engine: Engine,
    linker: Arc<Linker<wasi::Context>>,
    components: Arc<wasmtime::component::Linker<component::Context>>,
    /// The structure a module may have ([`compile::DEFAULT_BOUNDS`] unless set).
    bounds: compile::Bounds,
    /// A component's size limit ([`DEFAULT_COMPONENT_BYTES`] unless set).
    max_component_bytes: u64,
}

/// How often the backstop's clock ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

impl Runner {
    /// A runner that compiles with every core (a command line's: nothing else waits for them).
    pub fn new() -> Runner {
        Runner::build(true)
    }

    /// A runner whose compiles take one core: a server's, where the other cores run the
    /// decisions of the bots already entered, which a compile must not slow.
    pub fn compiling_on_one_core() -> Runner {
        Runner::build(false)
    }

    fn build(parallel_compilation: bool) -> Runner {
        let mut config = Config::new();
        config.parallel_compilation(parallel_compilation);
        config.consume_fuel(true);
        config.epoch_interruption(true);
        // The same answer on every machine: NaNs canonical, relaxed SIMD deterministic (the
        // engine is built without threads).
        config.cranelift_nan_canonicalization(true);
        config.relaxed_simd_deterministic(true);
        let engine = Engine::new(&config).expect("the engine's configuration is valid");
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("hosted-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .expect("a thread for the backstop's clock");
        let mut linker = Linker::new(&engine);
        wasi::link(&mut linker).expect("the WASI functions link");
        let components = component::linker(&engine).expect("WASI 0.2 links");
        Runner {
            engine,
            linker: Arc::new(linker),
            components: Arc::new(components),
            bounds: compile::DEFAULT_BOUNDS,
            max_component_bytes: DEFAULT_COMPONENT_BYTES,
        }
    }

    /// This runner, taking components of up to `bytes` (a module's limit is the caller's).
    pub fn with_component_bytes(mut self, bytes: u64) -> Runner {
        self.max_component_bytes = bytes;
        self
    }

    /// The largest component this runner takes.
    pub fn max_component_bytes(&self) -> u64 {
        self.max_component_bytes
    }

    /// This runner, checking modules' structure against `bounds` before compiling them.
    pub fn with_bounds(mut self, bounds: compile::Bounds) -> Runner {
        self.bounds = bounds;
        self
    }

    /// `bytes` compiled and checked: at most `max_bytes`, valid WebAssembly, importing only
    /// from `wasi_snapshot_preview1` (functions of the right type), exporting `_start` and
    /// `memory`, its initial memory within `budget`. Running it on a sample decision is the
    /// caller's (it knows what a legal answer is).
    pub fn compile(&self, bytes: &[u8], max_bytes: u64, budget: &Budget) -> Result<Bot, Refusal> {
        self.compile_cached(bytes, max_bytes, budget, None)
            .map(|(bot, _)| bot)
    }

    /// As [`Runner::compile`], the compiled code loaded from `cache` when it keeps the module
    /// (by its SHA-256, given with it), else compiled and kept there. Either way the module's
    /// structure is within the runner's bounds, checked before the compiler runs.
    pub fn compile_cached(
        &self,
        bytes: &[u8],
        max_bytes: u64,
        budget: &Budget,
        cache: Option<(&compile::ArtefactCache, &str)>,
    ) -> Result<(Bot, compile::CacheUse), Refusal> {
        let is_component = component::is_component(bytes);
        if is_component && bytes.len() as u64 > self.max_component_bytes {
            return Err(Refusal(format!(
                "the component is {} bytes: the limit is {} (--max-component-bytes)",
                bytes.len(),
                self.max_component_bytes
            )));
        }
        if !is_component && bytes.len() as u64 > max_bytes {
            return Err(Refusal(format!(
                "the module is {} bytes: the limit is {max_bytes} (--max-module-bytes)",
                bytes.len()
            )));
        }
        if !bytes.starts_with(b"\0asm") {
            return Err(Refusal(
                "not a WebAssembly module (a .wasm file starts with \\0asm; build for wasm32-wasip1 / wasm32-wasi, or a component with componentize-py)"
                    .into(),
            ));
        }
        compile::check_structure(bytes, &self.bounds)?;
        let kept = cache.and_then(|(cache, sha256)| cache.load(&self.engine, sha256, is_component));
        let (compiled, used) = match kept {
            Some(compiled) => (compiled, compile::CacheUse::Hit),
            None => {
                let compiled = if is_component {
                    Component::new(&self.engine, bytes)
                        .map(compile::Compiled::Component)
                        .map_err(|e| Refusal(format!("not a valid WebAssembly component: {e:#}")))?
                } else {
                    Module::new(&self.engine, bytes)
                        .map(compile::Compiled::Module)
                        .map_err(|e| Refusal(format!("not a valid WebAssembly module: {e:#}")))?
                };
                match cache {
                    Some((cache, sha256)) => {
                        cache.store(&self.engine, sha256, &compiled);
                        (compiled, compile::CacheUse::Miss)
                    }
                    None => (compiled, compile::CacheUse::None),
                }
            }
        };
        let code = match compiled {
            compile::Compiled::Module(module) => {
                Code::Module(self.checked_module(&module, budget)?)
            }
            compile::Compiled::Component(component) => {
                component::check_world(&self.engine, &component)?;
                Code::Component(self.components.instantiate_pre(&component).map_err(|e| {
                    Refusal(format!(
                        "the component's imports do not link (a hosted bot may import WASI 0.2 only): {e:#}"
                    ))
                })?)
            }
        };
        Ok((
            Bot {
                code,
                size: bytes.len(),
            },
            used,
        ))
    }

    /// A module's imports, exports and initial memory checked; linked.
    fn checked_module(
        &self,
        module: &Module,
        budget: &Budget,
    ) -> Result<InstancePre<wasi::Context>, Refusal> {
        for import in module.imports() {
            if import.module() != ALLOWED_MODULE {
                return Err(Refusal(format!(
                    "the module imports `{}.{}`: a hosted bot may import only from {ALLOWED_MODULE}",
                    import.module(),
                    import.name()
                )));
            }
        }
        if module.get_export("_start").is_none() {
            return Err(Refusal(
                "the module exports no `_start`: build a WASI command (a program with main), not a library"
                    .into(),
            ));
        }
        match module.get_export("memory") {
            Some(wasmtime::ExternType::Memory(memory)) => {
                let initial = memory.minimum().saturating_mul(memory.page_size());
                if initial > budget.memory_bytes {
                    return Err(Refusal(format!(
                        "the module's initial memory is {initial} bytes: the budget is {} bytes per instance",
                        budget.memory_bytes
                    )));
                }
            }
            _ => {
                return Err(Refusal(
                    "the module exports no `memory` (WASI needs it)".into(),
                ))
            }
        }
        self.linker
            .instantiate_pre(module)
            .map_err(|e| Refusal(format!("the module's imports do not link: {e:#}")))
    }

    /// Runs one decision of `bot` within `budget`.
    pub fn decide(&self, bot: &Bot, decision: &Decision<'_>, budget: &Budget) -> Outcome {
        match &bot.code {
            Code::Module(pre) => self.decide_module(pre, decision, budget),
            // WASI 0.2's calls block on a runtime of their own, which a thread that drives
            // a tokio runtime (a CLI's replay, a connected bot) may not do: such a caller's
            // decision runs on a thread of its own. The server's pool threads are plain.
            Code::Component(pre) if tokio::runtime::Handle::try_current().is_ok() => {
                std::thread::scope(|scope| {
                    scope
                        .spawn(|| self.decide_component(pre, decision, budget))
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
            }
            Code::Component(pre) => self.decide_component(pre, decision, budget),
        }
    }

    /// A store with the decision's fuel, backstop and memory limit.
    fn store<T: 'static>(
        &self,
        context: T,
        budget: &Budget,
        limits: fn(&mut T) -> &mut wasi::Limits,
    ) -> Store<T> {
        let mut store = Store::new(&self.engine, context);
        store.limiter(move |context| limits(context));
        store.set_fuel(budget.fuel).expect("fuel is enabled");
        let ticks = (budget.backstop.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        store.set_epoch_deadline(ticks);
        store
    }

    /// A component's decision: `decide(update)` on a fresh instance.
    fn decide_component(
        &self,
        pre: &wasmtime::component::InstancePre<component::Context>,
        decision: &Decision<'_>,
        budget: &Budget,
    ) -> Outcome {
        let context = component::Context::new(decision, budget);
        let mut store = self.store(context, budget, |c| &mut c.limits);
        let input = String::from_utf8_lossy(decision.input);
        let run = pre.instantiate(&mut store).and_then(|instance| {
            let decide =
                instance.get_typed_func::<(&str,), (String,)>(&mut store, component::EXPORT)?;
            let (answer,) = decide.call(&mut store, (&input,))?;
            Ok(answer)
        });
        let fuel_used = budget.fuel - store.get_fuel().unwrap_or(0);
        let context = store.into_data();
        let answer = match run {
            Ok(returned) => component::answer(returned),
            Err(error) => Err(fault_of(&error, context.limits.refused)),
        };
        Outcome {
            answer,
            fuel_used,
            stderr: context.log.take(),
        }
    }

    fn decide_module(
        &self,
        pre: &InstancePre<wasi::Context>,
        decision: &Decision<'_>,
        budget: &Budget,
    ) -> Outcome {
        let context = wasi::Context::new(decision, budget);
        let mut store = self.store(context, budget, |c| &mut c.limits);
        let run = pre.instantiate(&mut store).and_then(|instance| {
            let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
            start.call(&mut store, ())
        });
        let fuel_used = budget.fuel - store.get_fuel().unwrap_or(0);
        let context = store.into_data();
        let memory_refused = context.limits.refused;
        let ended = match run {
            Ok(()) => Ok(()),
            Err(error) => match wasi::Ended::of(&error) {
                Some(wasi::Ended::Exit(0)) | Some(wasi::Ended::Answered) => Ok(()),
                Some(wasi::Ended::Exit(code)) => {
                    Err(Fault::Trap(format!("exited with code {code}")))
                }
                Some(wasi::Ended::Flood) => Err(Fault::BadOutput(format!(
                    "more than {MAX_STDOUT_BYTES} bytes on stdout without a newline"
                ))),
                None => Err(fault_of(&error, memory_refused)),
            },
        };
        let answer = match (context.answer(), ended) {
            // A flood is no line, however much of it there is.
            (_, Err(fault @ Fault::BadOutput(_))) => Err(fault),
            // A line printed counts even if the module then failed: the decision was made.
            (Some(line), _) => Ok(line),
            (None, Err(fault)) => Err(fault),
            (None, Ok(())) if memory_refused => Err(Fault::Memory),
            (None, Ok(())) => Err(Fault::BadOutput(
                "the module ended without printing a line on stdout".into(),
            )),
        };
        Outcome {
            answer,
            fuel_used,
            stderr: context.stderr,
        }
    }
}

/// Why a run that failed gave no answer: the fuel, the backstop, the memory budget (a trap
/// after a refused growth), an exit, or a trap.
fn fault_of(error: &wasmtime::Error, memory_refused: bool) -> Fault {
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return Fault::Trap(format!("exited with code {} before answering", exit.0));
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Fault::Fuel,
        Some(Trap::Interrupt) => Fault::Overload,
        _ if memory_refused => Fault::Memory,
        Some(trap) => Fault::Trap(trap.to_string()),
        None => Fault::Trap(format!("{error:#}")),
    }
}

/// A module whose `_start` loops until its fuel runs out: how fast this host burns fuel
/// ([`Runner::fuel_per_second`]). Hand-encoded (a type, a function, one page of memory, the
/// exports `_start` and `memory`, and `loop br 0 end`), so the server needs no text format.
pub(crate) const FUEL_BURNER: &[u8] = &[
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
    0x03, 0x02, 0x01, 0x00, // functions: one of type 0
    0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
    0x07, 0x13, 0x02, // exports: two
    0x06, b'_', b's', b't', b'a', b'r', b't', 0x00, 0x00, // "_start": function 0
    0x06, b'm', b'e', b'm', b'o', b'r', b'y', 0x02, 0x00, // "memory": memory 0
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // code: loop br 0
];

impl Runner {
    /// Fuel this host burns per second on one thread, the best of `rounds` runs of `fuel`
    /// each (the best: what the host can do, not how loaded it was at that moment). A ladder
    /// refuses a fuel budget that its turn cannot hold on this host.
    pub fn fuel_per_second(&self, fuel: u64, rounds: u32) -> f64 {
        let budget = Budget {
            fuel,
            memory_bytes: 1 << 16,
            backstop: Duration::from_secs(60),
        };
        let bot = self
            .compile(FUEL_BURNER, u64::MAX, &budget)
            .expect("the fuel burner is a valid hosted module");
        let decision = Decision {
            input: b"",
            clock_ns: 0,
            seed: 0,
            bot: "fuel-burner@1",
            seat: 0,
            seq: 0,
        };
        let best = (0..rounds.max(1))
            .map(|_| {
                let started = std::time::Instant::now();
                let outcome = self.decide(&bot, &decision, &budget);
                debug_assert_eq!(outcome.answer, Err(Fault::Fuel));
                started.elapsed()
            })
            .min()
            .unwrap_or_default();
        fuel as f64 / best.as_secs_f64().max(1e-6)
    }
}

impl Default for Runner {
    fn default() -> Runner {
        Runner::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module that writes `text` to stdout from `_start`, after `work` loop iterations.
    fn printer(text: &str, work: u32) -> Vec<u8> {
        let len = text.len();
        wat::parse_str(format!(
            r#"(module
              (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
              (memory (export "memory") 1)
              (data (i32.const 64) "{text}")
              (func (export "_start") (local $i i32)
                (loop $spin
                  (local.set $i (i32.add (local.get $i) (i32.const 1)))
                  (br_if $spin (i32.lt_u (local.get $i) (i32.const {work}))))
                (i32.store (i32.const 0) (i32.const 64))
                (i32.store (i32.const 4) (i32.const {len}))
                (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#
        ))
        .expect("valid text")
    }

    #[test]
    fn the_fuel_burner_burns_its_whole_budget_and_gives_a_rate() {
        let runner = Runner::new();
        let budget = Budget::default();
        let bot = runner.compile(FUEL_BURNER, u64::MAX, &budget).unwrap();
        let outcome = runner.decide(&bot, &decision(), &budget);
        assert_eq!(outcome.answer, Err(Fault::Fuel));
        assert_eq!(outcome.fuel_used, budget.fuel);
        let rate = runner.fuel_per_second(2_000_000, 2);
        assert!(rate.is_finite() && rate > 1_000.0, "{rate}");
    }

    fn decision() -> Decision<'static> {
        Decision {
            input: b"{}",
            clock_ns: 5,
            seed: 1,
            bot: "t@1",
            seat: 0,
            seq: 3,
        }
    }

    #[test]
    fn a_module_answers_its_first_line_and_the_same_run_uses_the_same_fuel() {
        let runner = Runner::new();
        let budget = Budget::default();
        let bot = runner
            .compile(&printer("2\\0a", 1000), u64::MAX, &budget)
            .unwrap();
        let first = runner.decide(&bot, &decision(), &budget);
        assert_eq!(first.answer, Ok("2".to_string()));
        assert!(first.fuel_used > 1000, "{}", first.fuel_used);
        assert_eq!(runner.decide(&bot, &decision(), &budget), first);
    }

    #[test]
    fn out_of_fuel_is_the_fuel_fault() {
        let runner = Runner::new();
        let budget = Budget {
            fuel: 10_000,
            ..Budget::default()
        };
        let bot = runner
            .compile(&printer("0\\0a", 1_000_000), u64::MAX, &budget)
            .unwrap();
        let outcome = runner.decide(&bot, &decision(), &budget);
        assert_eq!(outcome.answer, Err(Fault::Fuel));
        assert_eq!(outcome.fuel_used, 10_000);
    }

    #[test]
    fn no_line_is_bad_output() {
        let runner = Runner::new();
        let budget = Budget::default();
        let bot = runner.compile(&printer("", 1), u64::MAX, &budget).unwrap();
        let outcome = runner.decide(&bot, &decision(), &budget);
        assert!(
            matches!(outcome.answer, Err(Fault::BadOutput(_))),
            "{outcome:?}"
        );
    }

    #[test]
    fn imports_outside_wasi_and_oversized_modules_are_refused_naming_why() {
        let runner = Runner::new();
        let budget = Budget::default();
        let foreign = wat::parse_str(
            r#"(module (import "env" "socket" (func)) (memory (export "memory") 1) (func (export "_start")))"#,
        )
        .unwrap();
        let refusal = runner.compile(&foreign, u64::MAX, &budget).err().unwrap();
        assert!(refusal.0.contains("env.socket"), "{refusal}");
        let refusal = runner.compile(&printer("0", 1), 10, &budget).err().unwrap();
        assert!(refusal.0.contains("--max-module-bytes"), "{refusal}");
        let refusal = runner
            .compile(b"not wasm", u64::MAX, &budget)
            .err()
            .unwrap();
        assert!(refusal.0.contains("not a WebAssembly module"), "{refusal}");
    }

    #[test]
    fn memory_past_the_budget_is_the_memory_fault() {
        let runner = Runner::new();
        let budget = Budget {
            memory_bytes: 4 << 16,
            ..Budget::default()
        };
        // Grows by 16 pages, refused; then traps, out of memory.
        let bomb = wat::parse_str(
            r#"(module (memory (export "memory") 1)
                (func (export "_start")
                  (if (i32.eq (memory.grow (i32.const 16)) (i32.const -1)) (then unreachable))))"#,
        )
        .unwrap();
        let bot = runner.compile(&bomb, u64::MAX, &budget).unwrap();
        assert_eq!(
            runner.decide(&bot, &decision(), &budget).answer,
            Err(Fault::Memory)
        );
    }
}
