//! Compiling a module, bounded and kept. A module's structure is checked before the compiler
//! sees it: the compiler's time and memory grow with the number of functions and with the
//! largest function body, so a module built to keep it busy for minutes (one long straight-line
//! function, tens of thousands of functions) is refused at once, naming the bound, while every
//! real bot (a C or Rust program, a Python interpreter) is far within them. The compiled code is
//! kept on disk ([`ArtefactCache`]), keyed by the module's SHA-256 and the engine's
//! configuration, so a restart loads it in milliseconds instead of compiling again.

use crate::Refusal;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmparser::{Parser, Payload};
use wasmtime::component::Component;
use wasmtime::{Engine, Module};

/// Compiled code: a core module or a component.
pub(crate) enum Compiled {
    Module(Module),
    Component(Component),
}

/// SHA-256 of `bytes`, in lower-case hex: a module's name in the compiled-artefact cache and
/// in the store.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The structure a module may have (checked before compiling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Functions the module defines (its imports aside).
    pub functions: u32,
    /// Bytes of the largest function body.
    pub function_body_bytes: u32,
    /// Locals of one function.
    pub locals: u32,
}

/// The defaults: a Python interpreter compiled to WebAssembly defines some 15,000 functions,
/// its largest body (the interpreter's loop) some hundreds of kilobytes; a C or Rust bot far
/// fewer. The compile bombs measured (a 4.9 MB straight-line function: 43 s to compile; 60,000
/// small functions: 21 s and 320 MB) are outside.
pub const DEFAULT_BOUNDS: Bounds = Bounds {
    functions: 40_000,
    function_body_bytes: 1 << 20,
    locals: 50_000,
};

/// Refuses a module whose structure is outside `bounds` (or that does not parse), naming the
/// bound; reads the module's sections without compiling anything.
pub fn check_structure(bytes: &[u8], bounds: &Bounds) -> Result<(), Refusal> {
    let invalid =
        |e: wasmparser::BinaryReaderError| Refusal(format!("not a valid WebAssembly module: {e}"));
    // A component nests core modules: the bound is on their functions together, or a
    // component of many modules each within it would keep the compiler busy all the same.
    let mut functions_in_all: u32 = 0;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(invalid)? {
            Payload::FunctionSection(functions) => {
                functions_in_all = functions_in_all.saturating_add(functions.count());
                if functions_in_all > bounds.functions {
                    return Err(Refusal(format!(
                        "the module defines {functions_in_all} functions: a hosted bot may define at most {} (a component's modules counted together; the compiler's bound on functions: --max-module-functions)",
                        bounds.functions
                    )));
                }
            }
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len();
                if size > bounds.function_body_bytes as usize {
                    return Err(Refusal(format!(
                        "the module has a function of {size} bytes: a hosted bot's functions may be at most {} bytes each (the compiler's bound on a function's size: --max-function-bytes)",
                        bounds.function_body_bytes
                    )));
                }
                let mut locals: u32 = 0;
                for declared in body.get_locals_reader().map_err(invalid)? {
                    let (count, _) = declared.map_err(invalid)?;
                    locals = locals.saturating_add(count);
                }
                if locals > bounds.locals {
                    return Err(Refusal(format!(
                        "the module has a function with {locals} locals: a hosted bot's functions may have at most {} (the compiler's bound on locals: --max-function-locals)",
                        bounds.locals
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Compiled modules on disk, one file per module and engine configuration. Derived data:
/// deleting the directory costs only compile time. A file that does not load (written by
/// another engine, damaged) is compiled again and replaced.
#[derive(Debug, Clone)]
pub struct ArtefactCache {
    dir: PathBuf,
}

/// How a compile went: loaded from the cache, or compiled (and written to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    Hit,
    Miss,
    /// No cache configured.
    None,
}

impl ArtefactCache {
    /// The cache in `dir` (made when the first module is kept).
    pub fn new(dir: &Path) -> ArtefactCache {
        ArtefactCache {
            dir: dir.to_path_buf(),
        }
    }

    /// The file of the module of SHA-256 `sha256` (hex digits only: it names a file) compiled
    /// by `engine`.
    fn path(&self, engine: &Engine, sha256: &str) -> Option<PathBuf> {
        if sha256.is_empty() || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Some(
            self.dir
                .join(format!("{sha256}-{:016x}.cwasm", hasher.finish())),
        )
    }

    /// The module (or component) of SHA-256 `sha256` compiled by `engine` before, if kept.
    pub(crate) fn load(&self, engine: &Engine, sha256: &str, component: bool) -> Option<Compiled> {
        let path = self.path(engine, sha256)?;
        // Read whole rather than mapped: a mapped file truncated under the server (an operator
        // clearing the cache while it runs) would fault the process when the code runs.
        let bytes = std::fs::read(&path).ok()?;
        // SAFETY: the file was written by `store` below from `serialize` of this engine's
        // configuration (its name carries the configuration's hash, and wasmtime checks the
        // engine and its settings again as it loads, and whether it is a module or a
        // component): the cache directory is the server's own, never a client's file.
        let loaded = if component {
            unsafe { Component::deserialize(engine, &bytes) }.map(Compiled::Component)
        } else {
            unsafe { Module::deserialize(engine, &bytes) }.map(Compiled::Module)
        };
        match loaded {
            Ok(compiled) => Some(compiled),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Keeps `compiled` (of SHA-256 `sha256`), written whole or not at all.
    pub(crate) fn store(&self, engine: &Engine, sha256: &str, compiled: &Compiled) {
        let serialized = match compiled {
            Compiled::Module(module) => module.serialize(),
            Compiled::Component(component) => component.serialize(),
        };
        let (Some(path), Ok(bytes)) = (self.path(engine, sha256), serialized) else {
            return;
        };
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&partial, bytes))
            .and_then(|()| std::fs::rename(&partial, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            tracing::warn!(dir = %self.dir.display(), "hosted bots' compiled-module cache: cannot keep a module (it is compiled again at the next start): {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module of `functions` empty functions.
    fn functions(functions: u32) -> Vec<u8> {
        let mut text = String::from("(module");
        for _ in 0..functions {
            text.push_str(" (func)");
        }
        text.push(')');
        wat::parse_str(text).unwrap()
    }

    #[test]
    fn a_kept_module_loads_from_the_cache_and_a_damaged_file_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtefactCache::new(&dir.path().join("cache"));
        let runner = crate::Runner::new();
        let budget = crate::Budget::default();
        let bytes = crate::FUEL_BURNER;
        let sha = "ab12";
        let (_, first) = runner
            .compile_cached(bytes, u64::MAX, &budget, Some((&cache, sha)))
            .unwrap();
        assert_eq!(first, CacheUse::Miss);
        let (bot, again) = runner
            .compile_cached(bytes, u64::MAX, &budget, Some((&cache, sha)))
            .unwrap();
        assert_eq!(again, CacheUse::Hit);
        assert_eq!(bot.size, bytes.len());
        for file in std::fs::read_dir(dir.path().join("cache")).unwrap() {
            std::fs::write(file.unwrap().path(), b"damaged").unwrap();
        }
        let (_, damaged) = runner
            .compile_cached(bytes, u64::MAX, &budget, Some((&cache, sha)))
            .unwrap();
        assert_eq!(damaged, CacheUse::Miss);
        // A name that is not hex digits is never a file name.
        let (_, odd) = runner
            .compile_cached(bytes, u64::MAX, &budget, Some((&cache, "../x")))
            .unwrap();
        assert_eq!(odd, CacheUse::Miss);
        assert!(!dir.path().join("x").exists());
    }

    #[test]
    fn a_module_over_a_bound_is_refused_naming_it() {
        let bounds = Bounds {
            functions: 10,
            function_body_bytes: 64,
            locals: 8,
        };
        check_structure(&functions(10), &bounds).unwrap();
        let many = check_structure(&functions(11), &bounds).unwrap_err();
        assert!(
            many.0.contains("11 functions") && many.0.contains("at most 10"),
            "{many}"
        );
        let long = wat::parse_str(format!(
            "(module (func {}))",
            "(drop (i32.const 1)) ".repeat(40)
        ))
        .unwrap();
        let refused = check_structure(&long, &bounds).unwrap_err();
        assert!(refused.0.contains("function's size"), "{refused}");
        let locals =
            wat::parse_str("(module (func (local i32 i32 i32 i32 i32 i32 i32 i32 i32)))").unwrap();
        let refused = check_structure(&locals, &bounds).unwrap_err();
        assert!(refused.0.contains("9 locals"), "{refused}");
        assert!(check_structure(b"\0asm\x01\0\0\0\x05", &bounds).is_err());
        // A component of modules each within the bound, over it together.
        let module = "(core module (func) (func) (func) (func))";
        let component = wat::parse_str(format!("(component {})", module.repeat(3))).unwrap();
        let refused = check_structure(&component, &bounds).unwrap_err();
        assert!(refused.0.contains("12 functions"), "{refused}");
        let component = wat::parse_str(format!("(component {})", module.repeat(2))).unwrap();
        check_structure(&component, &bounds).unwrap();
    }
}
