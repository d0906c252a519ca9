//! Files to purge (`FTP`): per organisation, the storage paths that may be purged after a day.
//! One stream per organisation ([`state`]); the decider ([`decide`]) keeps it free of repeats;
//! [`command`] runs its changes through the platform's runner, [`due`] reads the listed files.

pub mod command;
pub mod decide;
pub mod due;
pub mod state;

pub use decide::{check_path, purge, set};
pub use state::{FtpState, evolve};
