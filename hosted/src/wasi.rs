//! The host's side of `wasi_snapshot_preview1`, for one decision: stdin is the decision's line,
//! stdout and stderr are bounded buffers, the clock is virtual and the random bytes are derived
//! from the game's seed. Every function of the preview is linked, so ordinary wasi-libc and
//! Rust programs load; what a bot has no business doing (files, sockets, paths) answers ENOSYS
//! or EBADF and touches nothing of the host's. Each call costs fuel by the bytes it moves, so
//! the host's work on the module's behalf is metered like its own.

use crate::random;
use crate::{Budget, Decision};
use wasmtime::{Caller, Extern, FuncType, Linker, ResourceLimiter, Trap, Val, ValType};

/// The one module a hosted bot may import from.
pub const ALLOWED_MODULE: &str = "wasi_snapshot_preview1";
/// More on stdout than this without a newline is bad output.
pub const MAX_STDOUT_BYTES: usize = 64 << 10;
/// What is kept of stderr per decision; the rest is dropped.
pub const MAX_STDERR_BYTES: usize = 16 << 10;

/// The fuel a host call costs besides the bytes it moves.
const CALL_FUEL: u64 = 100;

const SUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EFAULT: i32 = 21;
const EINVAL: i32 = 28;
const ENOSYS: i32 = 52;
const ESPIPE: i32 = 70;

/// How a run ended from inside a host call (carried as the call's error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `proc_exit(code)`.
    Exit(i32),
    /// A line reached stdout: the decision is made, nothing after it matters.
    Answered,
    /// Too much on stdout without a newline.
    Flood,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Ended {}

impl Ended {
    pub fn of(error: &wasmtime::Error) -> Option<Ended> {
        error.downcast_ref::<Ended>().copied()
    }
}

/// Memory and tables within the budget; a refused growth is remembered, so a module that
/// fails after it is out of memory, not merely trapped.
pub struct Limits {
    memory_bytes: u64,
    pub refused: bool,
    /// Bytes of every memory of the instance together: a component instantiates several core
    /// modules, each with its own memory, and the budget is for all of them.
    used: u64,
    instances: usize,
    memories: usize,
    tables: usize,
}

/// Tables: enough for any real program's function pointers.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl Limits {
    /// A module: one instance, one memory.
    pub fn module(memory_bytes: u64) -> Limits {
        Limits {
            memory_bytes,
            refused: false,
            used: 0,
            instances: 1,
            memories: 1,
            tables: 4,
        }
    }

    /// A component: the core instances it is made of (an interpreter, its libc, WASI
    /// adapters) share one memory budget.
    pub fn component(memory_bytes: u64) -> Limits {
        Limits {
            instances: 64,
            memories: 16,
            tables: 64,
            ..Limits::module(memory_bytes)
        }
    }
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grown = (self.used.saturating_sub(current as u64)).saturating_add(desired as u64);
        let allowed = grown <= self.memory_bytes;
        self.refused |= !allowed;
        if allowed {
            self.used = grown;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= MAX_TABLE_ELEMENTS;
        self.refused |= !allowed;
        Ok(allowed)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn memories(&self) -> usize {
        self.memories
    }

    fn tables(&self) -> usize {
        self.tables
    }
}

/// One decision's WASI state.
pub struct Context {
    input: Vec<u8>,
    read: usize,
    stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub limits: Limits,
    clock_ns: u64,
    fuel: u64,
    random: random::Stream,
}

impl Context {
    pub fn new(decision: &Decision<'_>, budget: &Budget) -> Context {
        let mut input = decision.input.to_vec();
        input.push(b'\n');
        Context {
            input,
            read: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
            limits: Limits::module(budget.memory_bytes),
            clock_ns: decision.clock_ns,
            fuel: budget.fuel,
            random: random::Stream::new(decision),
        }
    }

    /// The first line on stdout (all of it if it has no newline), without the newline and a
    /// carriage return before it; `None` if nothing was printed.
    pub fn answer(&self) -> Option<String> {
        if self.stdout.is_empty() {
            return None;
        }
        let line = match self.stdout.iter().position(|&b| b == b'\n') {
            Some(end) => &self.stdout[..end],
            None => &self.stdout[..],
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some(String::from_utf8_lossy(line).into_owned())
    }
}

type Call<'a> = Caller<'a, Context>;

/// Takes `bytes` more fuel (and the cost of a call) from the running decision.
fn charge(caller: &mut Call<'_>, bytes: u64) -> wasmtime::Result<()> {
    let cost = CALL_FUEL.saturating_add(bytes);
    let left = caller.get_fuel()?;
    if left < cost {
        caller.set_fuel(0)?;
        return Err(Trap::OutOfFuel.into());
    }
    caller.set_fuel(left - cost)?;
    Ok(())
}

/// The module's memory, as bytes; `None` if it exports none.
fn memory<'a>(caller: &'a mut Call<'_>) -> Option<(&'a mut [u8], &'a mut Context)> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory.data_and_store_mut(caller)),
        _ => None,
    }
}

/// `len` bytes at `at`, if they lie in memory.
fn span(memory: &[u8], at: i32, len: u64) -> Option<std::ops::Range<usize>> {
    let start = at as u32 as usize;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= memory.len()).then_some(start..end)
}

fn read_u32(memory: &[u8], at: usize) -> Option<u32> {
    let bytes = memory.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn write(memory: &mut [u8], at: i32, bytes: &[u8]) -> bool {
    match span(memory, at, bytes.len() as u64) {
        Some(range) => {
            memory[range].copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// Writes `bytes` at `at` in the module's memory: SUCCESS, or EFAULT when they do not fit.
fn put(caller: &mut Call<'_>, at: i32, bytes: &[u8]) -> i32 {
    let Some((memory, _)) = memory(caller) else {
        return EFAULT;
    };
    if write(memory, at, bytes) {
        SUCCESS
    } else {
        EFAULT
    }
}

/// The (pointer, length) pairs of an iovec array, if it lies in memory.
fn iovecs(memory: &[u8], iovs: i32, count: i32) -> Option<Vec<(i32, u64)>> {
    if !(0..=1024).contains(&count) {
        return None;
    }
    let base = iovs as u32 as usize;
    (0..count as usize)
        .map(|k| {
            let at = base.checked_add(8 * k)?;
            Some((
                read_u32(memory, at)? as i32,
                read_u32(memory, at + 4)? as u64,
            ))
        })
        .collect()
}

fn is_std(fd: i32) -> bool {
    (0..=2).contains(&fd)
}

/// Every function of `wasi_snapshot_preview1`: the few a decision may use, metered; every
/// other one refused at call time ([`REFUSED`]).
pub fn link(linker: &mut Linker<Context>) -> wasmtime::Result<()> {
    link_args_and_clocks(linker)?;
    link_streams(linker)?;
    link_descriptors(linker)?;
    link_process(linker)?;
    const M: &str = ALLOWED_MODULE;
    for (name, params, errno) in REFUSED {
        let ty = FuncType::new(linker.engine(), params.iter().cloned(), [ValType::I32]);
        let errno = *errno;
        linker.func_new(M, name, ty, move |mut c, _params, results| {
            charge(&mut c, 0)?;
            results[0] = Val::I32(errno);
            Ok(())
        })?;
    }
    Ok(())
}

/// The program's arguments (its name alone), an empty environment, and the virtual clocks.
fn link_args_and_clocks(linker: &mut Linker<Context>) -> wasmtime::Result<()> {
    const M: &str = ALLOWED_MODULE;
    linker.func_wrap(
        M,
        "args_sizes_get",
        |mut c: Call<'_>, argc: i32, size: i32| {
            charge(&mut c, 8)?;
            let Some((memory, _)) = memory(&mut c) else {
                return Ok(EFAULT);
            };
            let ok = write(memory, argc, &1u32.to_le_bytes())
                && write(memory, size, &(PROGRAM.len() as u32).to_le_bytes());
            Ok(if ok { SUCCESS } else { EFAULT })
        },
    )?;
    linker.func_wrap(M, "args_get", |mut c: Call<'_>, argv: i32, buf: i32| {
        charge(&mut c, PROGRAM.len() as u64)?;
        let Some((memory, _)) = memory(&mut c) else {
            return Ok(EFAULT);
        };
        let ok = write(memory, argv, &(buf as u32).to_le_bytes()) && write(memory, buf, PROGRAM);
        Ok(if ok { SUCCESS } else { EFAULT })
    })?;
    linker.func_wrap(
        M,
        "environ_sizes_get",
        |mut c: Call<'_>, count: i32, size: i32| {
            charge(&mut c, 8)?;
            let Some((memory, _)) = memory(&mut c) else {
                return Ok(EFAULT);
            };
            let ok = write(memory, count, &0u32.to_le_bytes())
                && write(memory, size, &0u32.to_le_bytes());
            Ok(if ok { SUCCESS } else { EFAULT })
        },
    )?;
    linker.func_wrap(
        M,
        "environ_get",
        |mut c: Call<'_>, _environ: i32, _buf: i32| {
            charge(&mut c, 0)?;
            Ok(SUCCESS)
        },
    )?;
    linker.func_wrap(M, "clock_res_get", |mut c: Call<'_>, id: i32, at: i32| {
        charge(&mut c, 8)?;
        if !(0..=3).contains(&id) {
            return Ok(EINVAL);
        }
        Ok(put(&mut c, at, &1u64.to_le_bytes()))
    })?;
    linker.func_wrap(
        M,
        "clock_time_get",
        |mut c: Call<'_>, id: i32, _precision: i64, at: i32| {
            charge(&mut c, 8)?;
            if !(0..=3).contains(&id) {
                return Ok(EINVAL);
            }
            // Virtual: the record's time plus the fuel used so far, one nanosecond a unit.
            let used = c.data().fuel - c.get_fuel()?;
            let now = c.data().clock_ns.saturating_add(used);
            Ok(put(&mut c, at, &now.to_le_bytes()))
        },
    )?;
    Ok(())
}

/// stdin (the update), stdout (the action) and stderr (the bot's log).
fn link_streams(linker: &mut Linker<Context>) -> wasmtime::Result<()> {
    const M: &str = ALLOWED_MODULE;
    linker.func_wrap(
        M,
        "fd_read",
        |mut c: Call<'_>, fd: i32, iovs: i32, count: i32, read: i32| {
            if fd != 0 {
                charge(&mut c, 0)?;
                return Ok(EBADF);
            }
            let Some((memory, context)) = memory(&mut c) else {
                return Ok(EFAULT);
            };
            let Some(buffers) = iovecs(memory, iovs, count) else {
                return Ok(EFAULT);
            };
            let mut total = 0usize;
            for (at, len) in buffers {
                let left = &context.input[context.read..];
                let take = left.len().min(len as usize);
                if !write(memory, at, &left[..take]) {
                    return Ok(EFAULT);
                }
                context.read += take;
                total += take;
                if take < len as usize {
                    break;
                }
            }
            if !write(memory, read, &(total as u32).to_le_bytes()) {
                return Ok(EFAULT);
            }
            charge(&mut c, total as u64)?;
            Ok(SUCCESS)
        },
    )?;
    linker.func_wrap(
        M,
        "fd_write",
        |mut c: Call<'_>, fd: i32, iovs: i32, count: i32, written: i32| {
            if fd != 1 && fd != 2 {
                charge(&mut c, 0)?;
                return Ok(EBADF);
            }
            let Some((memory, context)) = memory(&mut c) else {
                return Ok(EFAULT);
            };
            let Some(buffers) = iovecs(memory, iovs, count) else {
                return Ok(EFAULT);
            };
            let mut total = 0u64;
            let mut ended = None;
            for (at, len) in buffers {
                let Some(range) = span(memory, at, len) else {
                    return Ok(EFAULT);
                };
                let bytes = &memory[range];
                total += len;
                if fd == 2 {
                    let room = MAX_STDERR_BYTES - context.stderr.len();
                    context
                        .stderr
                        .extend_from_slice(&bytes[..bytes.len().min(room)]);
                    continue;
                }
                let room = MAX_STDOUT_BYTES + 1 - context.stdout.len().min(MAX_STDOUT_BYTES + 1);
                context
                    .stdout
                    .extend_from_slice(&bytes[..bytes.len().min(room)]);
                if context.stdout.contains(&b'\n') {
                    ended = Some(Ended::Answered);
                    break;
                }
                if context.stdout.len() > MAX_STDOUT_BYTES {
                    ended = Some(Ended::Flood);
                    break;
                }
            }
            if !write(memory, written, &(total as u32).to_le_bytes()) {
                return Ok(EFAULT);
            }
            charge(&mut c, total)?;
            match ended {
                Some(ended) => Err(ended.into()),
                None => Ok(SUCCESS),
            }
        },
    )?;
    Ok(())
}

/// What wasi-libc asks of the three standard streams at start and exit; no other descriptor.
fn link_descriptors(linker: &mut Linker<Context>) -> wasmtime::Result<()> {
    const M: &str = ALLOWED_MODULE;
    linker.func_wrap(M, "fd_fdstat_get", |mut c: Call<'_>, fd: i32, at: i32| {
        charge(&mut c, 24)?;
        if !is_std(fd) {
            return Ok(EBADF);
        }
        // A character device without seek or tell rights: wasi-libc takes it for a terminal
        // and flushes stdout at each newline.
        const RIGHTS: u64 = (1 << 1) | (1 << 3) | (1 << 6) | (1 << 27);
        let mut stat = [0u8; 24];
        stat[0] = 2;
        stat[8..16].copy_from_slice(&RIGHTS.to_le_bytes());
        Ok(put(&mut c, at, &stat))
    })?;
    linker.func_wrap(M, "fd_filestat_get", |mut c: Call<'_>, fd: i32, at: i32| {
        charge(&mut c, 64)?;
        if !is_std(fd) {
            return Ok(EBADF);
        }
        let mut stat = [0u8; 64];
        stat[16] = 2;
        Ok(put(&mut c, at, &stat))
    })?;
    linker.func_wrap(
        M,
        "fd_fdstat_set_flags",
        |mut c: Call<'_>, fd: i32, _flags: i32| {
            charge(&mut c, 0)?;
            Ok(if is_std(fd) { SUCCESS } else { EBADF })
        },
    )?;
    linker.func_wrap(M, "fd_close", |mut c: Call<'_>, fd: i32| {
        charge(&mut c, 0)?;
        Ok(if is_std(fd) { SUCCESS } else { EBADF })
    })?;
    linker.func_wrap(
        M,
        "fd_seek",
        |mut c: Call<'_>, fd: i32, _offset: i64, _whence: i32, _at: i32| {
            charge(&mut c, 0)?;
            Ok(if is_std(fd) { ESPIPE } else { EBADF })
        },
    )?;
    linker.func_wrap(M, "fd_tell", |mut c: Call<'_>, fd: i32, _at: i32| {
        charge(&mut c, 0)?;
        Ok(if is_std(fd) { ESPIPE } else { EBADF })
    })?;
    // No preopened directories: wasi-libc asks from fd 3 up until EBADF.
    linker.func_wrap(
        M,
        "fd_prestat_get",
        |mut c: Call<'_>, _fd: i32, _at: i32| {
            charge(&mut c, 0)?;
            Ok(EBADF)
        },
    )?;
    linker.func_wrap(
        M,
        "fd_prestat_dir_name",
        |mut c: Call<'_>, _fd: i32, _at: i32, _len: i32| {
            charge(&mut c, 0)?;
            Ok(EBADF)
        },
    )?;
    Ok(())
}

/// poll, exit, raise, yield and the seeded random bytes.
fn link_process(linker: &mut Linker<Context>) -> wasmtime::Result<()> {
    const M: &str = ALLOWED_MODULE;
    linker.func_wrap(
        M,
        "poll_oneoff",
        |mut c: Call<'_>, subscriptions: i32, events: i32, count: i32, ready: i32| {
            // Returns at once, every subscription ready: nothing to wait for in a decision.
            if !(0..=4096).contains(&count) {
                charge(&mut c, 0)?;
                return Ok(EINVAL);
            }
            charge(&mut c, 80 * count as u64)?;
            let Some((memory, _)) = memory(&mut c) else {
                return Ok(EFAULT);
            };
            for k in 0..count {
                let Some(sub) = span(memory, subscriptions.wrapping_add(48 * k), 48) else {
                    return Ok(EFAULT);
                };
                let mut event = [0u8; 32];
                event[0..8].copy_from_slice(&memory[sub.start..sub.start + 8]);
                event[10] = memory[sub.start + 8];
                if !write(memory, events.wrapping_add(32 * k), &event) {
                    return Ok(EFAULT);
                }
            }
            Ok(if write(memory, ready, &(count as u32).to_le_bytes()) {
                SUCCESS
            } else {
                EFAULT
            })
        },
    )?;
    linker.func_wrap(
        M,
        "proc_exit",
        |_c: Call<'_>, code: i32| -> wasmtime::Result<()> { Err(Ended::Exit(code).into()) },
    )?;
    linker.func_wrap(
        M,
        "proc_raise",
        |_c: Call<'_>, signal: i32| -> wasmtime::Result<i32> {
            Err(wasmtime::Error::msg(format!(
                "the module raised signal {signal}"
            )))
        },
    )?;
    linker.func_wrap(M, "sched_yield", |mut c: Call<'_>| {
        charge(&mut c, 0)?;
        Ok(SUCCESS)
    })?;
    linker.func_wrap(M, "random_get", |mut c: Call<'_>, at: i32, len: i32| {
        let len = len as u32 as u64;
        charge(&mut c, len.saturating_mul(4))?;
        let Some((memory, context)) = memory(&mut c) else {
            return Ok(EFAULT);
        };
        let Some(range) = span(memory, at, len) else {
            return Ok(EFAULT);
        };
        context.random.fill(&mut memory[range]);
        Ok(SUCCESS)
    })?;
    Ok(())
}

/// The program's one argument, NUL-terminated.
const PROGRAM: &[u8] = b"bot\0";

use ValType::{I32, I64};

/// The functions a decision has no use for: files, paths, sockets. Linked so that any program
/// loads; each answers its errno and does nothing.
const REFUSED: &[(&str, &[ValType], i32)] = &[
    ("fd_advise", &[I32, I64, I64, I32], EBADF),
    ("fd_allocate", &[I32, I64, I64], EBADF),
    ("fd_datasync", &[I32], EBADF),
    ("fd_fdstat_set_rights", &[I32, I64, I64], EBADF),
    ("fd_filestat_set_size", &[I32, I64], EBADF),
    ("fd_filestat_set_times", &[I32, I64, I64, I32], EBADF),
    ("fd_pread", &[I32, I32, I32, I64, I32], EBADF),
    ("fd_pwrite", &[I32, I32, I32, I64, I32], EBADF),
    ("fd_readdir", &[I32, I32, I32, I64, I32], EBADF),
    ("fd_renumber", &[I32, I32], EBADF),
    ("fd_sync", &[I32], EBADF),
    ("path_create_directory", &[I32, I32, I32], ENOSYS),
    ("path_filestat_get", &[I32, I32, I32, I32, I32], ENOSYS),
    (
        "path_filestat_set_times",
        &[I32, I32, I32, I32, I64, I64, I32],
        ENOSYS,
    ),
    ("path_link", &[I32, I32, I32, I32, I32, I32, I32], ENOSYS),
    (
        "path_open",
        &[I32, I32, I32, I32, I32, I64, I64, I32, I32],
        ENOSYS,
    ),
    ("path_readlink", &[I32, I32, I32, I32, I32, I32], ENOSYS),
    ("path_remove_directory", &[I32, I32, I32], ENOSYS),
    ("path_rename", &[I32, I32, I32, I32, I32, I32], ENOSYS),
    ("path_symlink", &[I32, I32, I32, I32, I32], ENOSYS),
    ("path_unlink_file", &[I32, I32, I32], ENOSYS),
    ("sock_accept", &[I32, I32, I32], ENOSYS),
    ("sock_recv", &[I32, I32, I32, I32, I32, I32], ENOSYS),
    ("sock_send", &[I32, I32, I32, I32, I32], ENOSYS),
    ("sock_shutdown", &[I32, I32], ENOSYS),
];
