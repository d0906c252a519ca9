//! How the pads context is configured beyond the platform's state: the binary fills it from its
//! flags and environment, tests give theirs; the library reads no environment.

/// The pads context's configuration.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The API key the operator gives (`PALIMPSEST_PADS_APIKEY`); `None`: the one kept in
    /// `<data dir>/APIKEY.txt`, generated there when missing, as Etherpad does.
    pub apikey: Option<String>,
}
