//! `--docs-admin-name` (`PALIMPSEST_DOCS_ADMIN_NAME`) reaches the docs context's settings: the
//! user name CouchDB clients send with the admin token as Basic credentials.

use clap::Parser;
use palimpsest::cli::{Cli, Command, context_settings};

fn admin_name(args: &[&str]) -> String {
    let cli = Cli::try_parse_from(args).expect("parse");
    let Command::Serve(http) = cli.command else {
        panic!("serve parsed as {:?}", cli.command);
    };
    context_settings(&cli.settings, &http)
        .expect("settings")
        .docs
        .admin_name
}

#[test]
fn the_flag_names_the_docs_administrator_and_admin_is_the_default() {
    assert_eq!(
        admin_name(&["palimpsest", "serve", "--docs-admin-name", "root"]),
        "root"
    );
    if std::env::var_os("PALIMPSEST_DOCS_ADMIN_NAME").is_none() {
        assert_eq!(admin_name(&["palimpsest", "serve"]), "admin");
    }
}
