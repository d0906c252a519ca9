//! A throw-away Postgres database per test.

use tokio_postgres::NoTls;

/// The maintenance connection string: `PALIMPSEST_TEST_ADMIN_URL`, else the local default
/// (`postgres` on 127.0.0.1:5432).
pub fn admin_url() -> String {
    if let Ok(url) = std::env::var("PALIMPSEST_TEST_ADMIN_URL") {
        return url;
    }
    "postgres://postgres@127.0.0.1:5432/postgres".to_owned()
}

/// A database created for one test; call [`TestDb::drop`] at the end (dropping it without
/// doing so leaves the database for a later clean-up, named `palimpsest_test_*`).
pub struct TestDb {
    name: String,
    url: String,
}

impl TestDb {
    /// Creates a fresh, empty database with a unique name.
    pub async fn create() -> TestDb {
        let name = format!("palimpsest_test_{}", uuid::Uuid::new_v4().simple());
        let admin = admin_url();
        let (client, connection) = tokio_postgres::connect(&admin, NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot reach Postgres at {admin}: {e}"));
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create test database: {e}"));
        let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
        TestDb {
            url: format!("{base}/{name}"),
            name,
        }
    }

    /// The connection string of the test's database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops the database, closing whatever connections the test left open.
    pub async fn drop(self) {
        let admin = admin_url();
        if let Ok((client, connection)) = tokio_postgres::connect(&admin, NoTls).await {
            tokio::spawn(connection);
            let _ = client
                .batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ))
                .await;
        }
    }
}
