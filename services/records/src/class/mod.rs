//! Classes: the aggregate recording each class's declaration once on its own stream.
//!
//! [`declaration`] says what a declaration must hold and names the spec's special classes,
//! [`state`] folds a class stream, [`decide`] records a declaration once (pure), [`command`]
//! runs that through the platform's runner, [`lookup`] finds the class an operation names.

pub mod command;
pub mod decide;
pub mod declaration;
pub mod lookup;
pub mod state;

pub use decide::decide_declaration;
pub use declaration::{
    FTP, HDR, ORG, TASK, TECHNICAL, builtin, is_class_name, is_org_code, validate,
};
pub use state::ClassState;
