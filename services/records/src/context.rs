//! What every records handler and background job shares: the platform's state, the site key,
//! the settings, and the cache of class declarations.

use crate::seal::SiteKey;
use crate::settings::Settings;
use palimpsest_events::records::ClassDeclaration;
use palimpsest_web::AppState;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The records context's handler state.
#[derive(Clone)]
pub struct Records {
    /// The platform's state: log, read pool, admin token.
    pub app: AppState,
    /// The site key sealing `data`.
    pub key: SiteKey,
    /// How it runs.
    pub settings: Arc<Settings>,
    /// Declarations read from class streams (a declaration never changes once recorded).
    pub classes: Arc<RwLock<HashMap<String, Arc<ClassDeclaration>>>>,
}

impl Records {
    /// The context's state.
    pub fn new(app: AppState, key: SiteKey, settings: Settings) -> Records {
        Records {
            app,
            key,
            settings: Arc::new(settings),
            classes: Arc::default(),
        }
    }

    /// The operation time now.
    pub fn now(&self) -> i64 {
        (self.settings.clock)()
    }
}
