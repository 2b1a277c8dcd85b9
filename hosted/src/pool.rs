//! A bounded pool of threads for hosted decisions, apart from the async runtime: a busy ladder
//! of hosted bots waits in the pool's queues, never on the threads that run the games.
//!
//! Fair by the fuel each bot uses: every bot (a *tenant*) has its own queue, bounded
//! ([`Pool::new`]'s `per_tenant`), and the threads serve the tenants in order of the fuel they
//! used (start-time fair queueing: each tenant's virtual time is its fuel so far, a tenant that
//! comes back after waiting nothing starts at the least virtual time of those waiting, so it
//! banks no credit). Each bot with decisions waiting thus gets an equal share of the threads'
//! fuel: a heavy bot's decisions slow its own games, not other bots'. A full tenant queue (or
//! the whole pool's bound) refuses the job at once (the caller decides what a refusal means:
//! for the ladder, the host is overloaded and the bot is not charged).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A job: runs, and says how much fuel it used (its tenant's charge).
type Job = Box<dyn FnOnce() -> u64 + Send>;

/// Cheap to clone; the threads stop when the last clone is dropped.
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
    /// Dropped with the last clone: the threads then stop.
    _alive: Arc<Alive>,
}

struct Shared {
    scheduler: Mutex<Scheduler>,
    ready: Condvar,
    stats: Stats,
}

/// Tells the threads to stop when the last [`Pool`] is dropped.
struct Alive(Arc<Shared>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.scheduler.lock().expect("pool lock").closed = true;
        self.0.ready.notify_all();
    }
}

/// What the pool is doing, for the metrics.
#[derive(Default)]
pub struct Stats {
    /// Jobs waiting for a thread.
    pub queued: AtomicUsize,
    /// Jobs running.
    pub running: AtomicUsize,
    pub threads: AtomicUsize,
}

/// The pool's queue (or the tenant's) is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// The threads' stack: compiled WebAssembly runs on it (with its own bounded stack inside).
const STACK_BYTES: usize = 8 << 20;

impl Pool {
    /// `threads` threads (at least one) and room for `queue` jobs waiting in all, at most
    /// `per_tenant` of them one tenant's.
    pub fn new(threads: usize, queue: usize, per_tenant: usize) -> Pool {
        let shared = Arc::new(Shared {
            scheduler: Mutex::new(Scheduler::new(queue, per_tenant)),
            ready: Condvar::new(),
            stats: Stats::default(),
        });
        for k in 0..threads.max(1) {
            let serving = shared.clone();
            std::thread::Builder::new()
                .name(format!("hosted-bot-{k}"))
                .stack_size(STACK_BYTES)
                .spawn(move || serving.serve())
                .expect("a thread for hosted bots");
            shared.stats.threads.fetch_add(1, Ordering::Relaxed);
        }
        Pool {
            _alive: Arc::new(Alive(shared.clone())),
            shared,
        }
    }

    /// Queues `job` for `tenant` (a bot), or refuses it when its queue or the pool's is full.
    /// The job returns the fuel it used: its tenant's turn comes back that much later.
    pub fn spawn(
        &self,
        tenant: &str,
        job: impl FnOnce() -> u64 + Send + 'static,
    ) -> Result<(), Full> {
        let mut scheduler = self.shared.scheduler.lock().expect("pool lock");
        scheduler.push(tenant, Box::new(job))?;
        self.shared.stats.queued.fetch_add(1, Ordering::Relaxed);
        drop(scheduler);
        self.shared.ready.notify_one();
        Ok(())
    }

    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }
}

impl Shared {
    /// One thread's loop: the next job of the tenant whose turn it is, run, charged.
    fn serve(&self) {
        loop {
            let (tenant, job) = {
                let mut scheduler = self.scheduler.lock().expect("pool lock");
                loop {
                    if let Some(next) = scheduler.pop() {
                        break next;
                    }
                    if scheduler.closed {
                        return;
                    }
                    scheduler = self.ready.wait(scheduler).expect("pool lock");
                }
            };
            // Counted as running before it leaves the queue's count: a job is always in one
            // count or both, never in neither (a reader of both sees the work in flight).
            self.stats.running.fetch_add(1, Ordering::SeqCst);
            self.stats.queued.fetch_sub(1, Ordering::SeqCst);
            let fuel = job();
            self.stats.running.fetch_sub(1, Ordering::Relaxed);
            self.scheduler
                .lock()
                .expect("pool lock")
                .charge(&tenant, fuel);
        }
    }
}

/// The fair queues, without threads (deterministic: tested as it is).
struct Scheduler {
    tenants: HashMap<String, Tenant>,
    /// Jobs waiting in all, and the bounds.
    waiting: usize,
    max_waiting: usize,
    per_tenant: usize,
    closed: bool,
}

#[derive(Default)]
struct Tenant {
    jobs: VecDeque<Job>,
    /// Fuel charged so far (virtual time); jobs running are charged when they end.
    virtual_time: u128,
    /// Jobs of this tenant running now.
    running: usize,
}

/// Tenants kept before the idle ones at or below the floor are forgotten.
const FORGET_IDLE_PAST: usize = 1024;

/// A job's least charge, so that a tenant whose jobs use no fuel still takes turns.
const LEAST_CHARGE: u64 = 1;

impl Scheduler {
    fn new(max_waiting: usize, per_tenant: usize) -> Scheduler {
        Scheduler {
            tenants: HashMap::new(),
            waiting: 0,
            max_waiting: max_waiting.max(1),
            per_tenant: per_tenant.max(1),
            closed: false,
        }
    }

    /// The least virtual time among the tenants with work (waiting or running).
    fn floor(&self) -> Option<u128> {
        self.tenants
            .values()
            .filter(|t| !t.jobs.is_empty() || t.running > 0)
            .map(|t| t.virtual_time)
            .min()
    }

    fn push(&mut self, tenant: &str, job: Job) -> Result<(), Full> {
        if self.waiting >= self.max_waiting {
            return Err(Full);
        }
        let floor = self.floor();
        let entry = self.tenants.entry(tenant.to_string()).or_default();
        if entry.jobs.len() >= self.per_tenant {
            return Err(Full);
        }
        if entry.jobs.is_empty() && entry.running == 0 {
            // Back after waiting for nothing: no credit banked while idle.
            entry.virtual_time = entry.virtual_time.max(floor.unwrap_or(0));
        }
        entry.jobs.push_back(job);
        self.waiting += 1;
        Ok(())
    }

    /// The next job: of the waiting tenant with the least virtual time (ties: by name, so the
    /// order is the same on every run).
    fn pop(&mut self) -> Option<(String, Job)> {
        let name = self
            .tenants
            .iter()
            .filter(|(_, t)| !t.jobs.is_empty())
            .min_by(|(a_name, a), (b_name, b)| {
                (a.virtual_time, a_name.as_str()).cmp(&(b.virtual_time, b_name.as_str()))
            })
            .map(|(name, _)| name.clone())?;
        let tenant = self.tenants.get_mut(&name).expect("found above");
        let job = tenant.jobs.pop_front().expect("not empty");
        tenant.running += 1;
        self.waiting -= 1;
        Some((name, job))
    }

    /// A job of `tenant` ended, having used `fuel`.
    fn charge(&mut self, tenant: &str, fuel: u64) {
        let Some(entry) = self.tenants.get_mut(tenant) else {
            return;
        };
        entry.running = entry.running.saturating_sub(1);
        entry.virtual_time += u128::from(fuel.max(LEAST_CHARGE));
        if self.tenants.len() > FORGET_IDLE_PAST {
            // Idle tenants at or below the floor would be lifted to it anyway when they come
            // back: forgetting them loses nothing (those above it keep their debt).
            let floor = self.floor().unwrap_or(u128::MAX);
            self.tenants
                .retain(|_, t| !t.jobs.is_empty() || t.running > 0 || t.virtual_time > floor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn jobs_run_on_the_pools_threads_and_a_full_queue_refuses() {
        let pool = Pool::new(1, 1, 8);
        let (gate_tx, gate_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<String>();
        let done = done_tx.clone();
        // The one thread blocks on the gate; one job waits; a third is refused.
        pool.spawn("a", move || {
            gate_rx.recv().unwrap();
            done.send(std::thread::current().name().unwrap().to_string())
                .unwrap();
            0
        })
        .unwrap();
        while pool.stats().running.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        let done = done_tx.clone();
        pool.spawn("b", move || {
            done.send("second".into()).unwrap();
            0
        })
        .unwrap();
        assert_eq!(pool.spawn("c", || 0), Err(Full));
        gate_tx.send(()).unwrap();
        assert_eq!(done_rx.recv().unwrap(), "hosted-bot-0");
        assert_eq!(done_rx.recv().unwrap(), "second");
    }

    #[test]
    fn a_tenants_queue_is_bounded_on_its_own() {
        let mut scheduler = Scheduler::new(100, 2);
        scheduler.push("heavy", Box::new(|| 0)).unwrap();
        scheduler.push("heavy", Box::new(|| 0)).unwrap();
        assert!(scheduler.push("heavy", Box::new(|| 0)).is_err());
        scheduler.push("light", Box::new(|| 0)).unwrap();
    }

    /// One thread's order of service, simulated: each job of `heavy` uses 50 M fuel, each of
    /// the light bots' 1 M; every tenant always has a decision waiting (its games go on).
    /// Returns how many jobs each light bot got done in the first `turns` turns, and the heavy
    /// bot's.
    fn served(turns: usize) -> (Vec<usize>, usize) {
        let lights = ["l1", "l2", "l3", "l4"];
        let mut scheduler = Scheduler::new(1000, 64);
        let fuel_of = |tenant: &str| {
            if tenant == "heavy" {
                50_000_000
            } else {
                1_000_000
            }
        };
        for tenant in lights.iter().chain(&["heavy"]) {
            let fuel = fuel_of(tenant);
            scheduler.push(tenant, Box::new(move || fuel)).unwrap();
        }
        let mut done: HashMap<String, usize> = HashMap::new();
        for _ in 0..turns {
            let (tenant, job) = scheduler.pop().expect("always work");
            let fuel = job();
            scheduler.charge(&tenant, fuel);
            *done.entry(tenant.clone()).or_default() += 1;
            // The tenant's game goes on: its next decision waits.
            let fuel = fuel_of(&tenant);
            scheduler.push(&tenant, Box::new(move || fuel)).unwrap();
        }
        (
            lights
                .iter()
                .map(|l| done.get(*l).copied().unwrap_or(0))
                .collect(),
            done.get("heavy").copied().unwrap_or(0),
        )
    }

    #[test]
    fn a_heavy_bot_gets_the_same_fuel_as_each_light_one_not_the_same_turns() {
        let (lights, heavy) = served(1_000);
        // Equal fuel: the heavy bot's 50 M decision comes once per 50 decisions of each light
        // bot (about 5 heavy turns, 249 of each light bot's), where turns in order would give
        // each bot 200 turns and the heavy one most of the fuel.
        for light in &lights {
            assert!(
                *light >= 240,
                "a light bot got {light} of 1,000 turns: {lights:?}"
            );
        }
        assert!(heavy <= 10, "the heavy bot got {heavy} turns of 1,000");
        assert!(heavy >= 1, "the heavy bot is served too");
        // The order is the same on every run.
        assert_eq!(served(1_000), (lights, heavy));
    }

    #[test]
    fn a_bot_back_after_idling_banks_no_credit() {
        let mut scheduler = Scheduler::new(100, 64);
        for _ in 0..20 {
            scheduler.push("busy", Box::new(|| 10)).unwrap();
        }
        for _ in 0..10 {
            let (tenant, job) = scheduler.pop().unwrap();
            let fuel = job();
            scheduler.charge(&tenant, fuel);
        }
        // "late" arrives with 10 jobs: it shares from now on, it does not take every turn
        // until it has caught up with the 100 fuel "busy" used.
        for _ in 0..10 {
            scheduler.push("late", Box::new(|| 10)).unwrap();
        }
        let mut order = Vec::new();
        for _ in 0..6 {
            let (tenant, job) = scheduler.pop().unwrap();
            let fuel = job();
            scheduler.charge(&tenant, fuel);
            order.push(tenant);
        }
        let late = order.iter().filter(|t| *t == "late").count();
        assert!((2..=4).contains(&late), "{order:?}");
    }
}
