//! Long-running tasks a context starts beside its routes (records' task runner, its schema
//! declaration): they stop when the process stops, and stopping the process waits for them, so
//! nothing of an app keeps running (against a database that is gone) after it stopped.

use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The process's background tasks and the signal that stops them (a cheap handle: clones share
/// both). `AppState::background`; the process that serves the routes joins them when it stops.
#[derive(Clone, Default)]
pub struct Background {
    shutdown: CancellationToken,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Background {
    /// Tasks stopped by `shutdown` (the process's own stop signal).
    pub fn stopped_by(shutdown: CancellationToken) -> Self {
        Background {
            shutdown,
            tasks: Arc::default(),
        }
    }

    /// Starts `task`, handing it the stop signal: it must return soon after the signal.
    pub fn spawn<F, Fut>(&self, name: &'static str, task: F)
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let run = task(self.shutdown.clone());
        let handle = tokio::spawn(async move {
            run.await;
            tracing::debug!(task = name, "background task ended");
        });
        let mut tasks = match self.tasks.lock() {
            Ok(tasks) => tasks,
            Err(poisoned) => poisoned.into_inner(),
        };
        tasks.retain(|t| !t.is_finished());
        tasks.push(handle);
    }

    /// Signals every task to stop.
    pub fn stop(&self) {
        self.shutdown.cancel();
    }

    /// Waits until every task started so far has ended (call after [`Background::stop`]).
    pub async fn join(&self) {
        let tasks = match self.tasks.lock() {
            Ok(mut tasks) => std::mem::take(&mut *tasks),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "a background task failed");
            }
        }
    }

    /// How many tasks have not ended yet.
    pub fn running(&self) -> usize {
        match self.tasks.lock() {
            Ok(tasks) => tasks.iter().filter(|t| !t.is_finished()).count(),
            Err(poisoned) => poisoned
                .into_inner()
                .iter()
                .filter(|t| !t.is_finished())
                .count(),
        }
    }
}
