//! The pool heavy exports run in (`getHTML`, `createDiffHTML`): rendering a pad with many
//! revisions is seconds of CPU, which on a request thread stalls every other request the
//! thread would serve (four callers made `/healthz` answer in 2.3 s, issue #25). Each export
//! runs on tokio's blocking threads, at most as many at once as the machine has cores; callers
//! beyond that wait for a turn (within the platform's request timeout, then 503).

use std::sync::Arc;
use tokio::sync::Semaphore;

/// Why an export did not give its result.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The pool was closed (never, in practice: it is never closed).
    #[error("the export pool is closed")]
    Closed,
    /// The export panicked or was cancelled on its thread.
    #[error("the export did not finish: {0}")]
    Failed(#[from] tokio::task::JoinError),
}

/// A bounded number of exports running at once, off the request threads.
#[derive(Debug, Clone)]
pub struct ExportPool {
    turns: Arc<Semaphore>,
}

impl Default for ExportPool {
    /// As many turns as the machine has cores.
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        ExportPool::with_turns(cores)
    }
}

impl ExportPool {
    /// A pool running at most `turns` exports at once (at least one).
    pub fn with_turns(turns: usize) -> Self {
        ExportPool {
            turns: Arc::new(Semaphore::new(turns.max(1))),
        }
    }

    /// Runs `export` on a blocking thread once a turn is free; its result.
    pub async fn run<T, F>(&self, export: F) -> Result<T, ExportError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        if self.turns.available_permits() == 0 {
            metrics::counter!("palimpsest_pads_exports_waited_total").increment(1);
        }
        let turn = self
            .turns
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ExportError::Closed)?;
        let result = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            export()
        })
        .await?;
        metrics::counter!("palimpsest_pads_exports_total").increment(1);
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn exports_run_off_the_request_thread_and_no_more_than_the_turns_at_once() {
        let pool = ExportPool::with_turns(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let caller = std::thread::current().id();
        let exports = (0..6).map(|_| {
            let (running, most, pool) = (running.clone(), most.clone(), pool.clone());
            async move {
                pool.run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(30));
                    running.fetch_sub(1, Ordering::SeqCst);
                    std::thread::current().id()
                })
                .await
                .expect("export")
            }
        });
        let threads = futures::future::join_all(exports).await;
        assert!(
            threads.iter().all(|t| *t != caller),
            "never on the caller's thread"
        );
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }
}
