//! The library half of `gangs-cli`: what the `gangs` binary shares with the host benchmark
//! (`cargo bench -p gangs-service --bench host`), so that both measure with the same code.

pub mod load;
