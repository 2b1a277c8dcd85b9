//! A bounded pool of threads for hosted decisions, apart from the async runtime: a busy ladder
//! of hosted bots waits in the pool's queue, never on the threads that run the games. The
//! queue's length is bounded; a full queue refuses the job at once (the caller decides what a
//! refusal means: for the ladder, the host is overloaded and the bot is not charged).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

/// Cheap to clone; the threads stop when the last clone is dropped.
#[derive(Clone)]
pub struct Pool {
    sender: SyncSender<Job>,
    stats: Arc<Stats>,
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

/// The pool's queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// The threads' stack: compiled WebAssembly runs on it (with its own bounded stack inside).
const STACK_BYTES: usize = 8 << 20;

impl Pool {
    /// `threads` threads (at least one) and room for `queue` jobs waiting.
    pub fn new(threads: usize, queue: usize) -> Pool {
        let (sender, receiver) = sync_channel::<Job>(queue);
        let receiver = Arc::new(Mutex::new(receiver));
        let stats = Arc::new(Stats::default());
        for k in 0..threads.max(1) {
            let receiver = receiver.clone();
            let counts = stats.clone();
            std::thread::Builder::new()
                .name(format!("hosted-bot-{k}"))
                .stack_size(STACK_BYTES)
                .spawn(move || loop {
                    let job = match receiver.lock() {
                        Ok(receiver) => receiver.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    counts.queued.fetch_sub(1, Ordering::Relaxed);
                    counts.running.fetch_add(1, Ordering::Relaxed);
                    job();
                    counts.running.fetch_sub(1, Ordering::Relaxed);
                })
                .expect("a thread for hosted bots");
            stats.threads.fetch_add(1, Ordering::Relaxed);
        }
        Pool { sender, stats }
    }

    /// Queues `job`, or refuses it when the queue is full.
    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Full> {
        self.stats.queued.fetch_add(1, Ordering::Relaxed);
        match self.sender.try_send(Box::new(job)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.stats.queued.fetch_sub(1, Ordering::Relaxed);
                Err(Full)
            }
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn jobs_run_on_the_pools_threads_and_a_full_queue_refuses() {
        let pool = Pool::new(1, 1);
        let (gate_tx, gate_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<String>();
        let done = done_tx.clone();
        // The one thread blocks on the gate; one job waits; a third is refused.
        pool.spawn(move || {
            gate_rx.recv().unwrap();
            done.send(std::thread::current().name().unwrap().to_string())
                .unwrap();
        })
        .unwrap();
        while pool.stats().running.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        let done = done_tx.clone();
        pool.spawn(move || done.send("second".into()).unwrap())
            .unwrap();
        assert_eq!(pool.spawn(|| {}), Err(Full));
        gate_tx.send(()).unwrap();
        assert_eq!(done_rx.recv().unwrap(), "hosted-bot-0");
        assert_eq!(done_rx.recv().unwrap(), "second");
    }
}
