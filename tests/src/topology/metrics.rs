//! What the topology reads from the processes' `/metrics` (Prometheus text): how many
//! partitions each `project` process holds, and how many events each relay has published. The
//! harness decides from them which projector to kill (one holding partitions), which relay is
//! the active one, and when the survivors have taken the partitions over.

use std::time::Duration;

/// The gauge a `project` process sets to the number of partitions of a read model it holds.
pub const PARTITIONS_HELD: &str = "palimpsest_projection_partitions_held";

/// The counter a relay raises for every event JetStream acknowledged to it.
pub const RELAY_PUBLISHED: &str = "palimpsest_relay_published_total";

/// The counter a serve raises for every request whose reads the replica had not replayed in
/// time (read from the primary instead).
pub const REPLICA_BEHIND: &str = "palimpsest_replica_behind_total";

/// The read model whose partitions the topology shares between its `project` processes.
pub const PARTITIONED: &str = "stream_heads";

/// The `/metrics` text of the process whose HTTP port is `port`, or `None` when it does not
/// answer within a second (a killed or starting process).
pub async fn scrape(port: u16) -> Option<String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .ok()?;
    let answer = http
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.text().await.ok()
}

/// The value of metric `name` in `text`, among samples whose labels include `label` (a
/// `key="value"` pair) when one is given; several matching samples are added up.
pub fn value(text: &str, name: &str, label: Option<&str>) -> Option<f64> {
    let mut found = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let (labels, number) = match rest.strip_prefix('{') {
            Some(labelled) => match labelled.split_once('}') {
                Some((labels, number)) => (labels, number),
                None => continue,
            },
            // Another metric whose name starts with this one's (`name_total`).
            None if !rest.starts_with(' ') => continue,
            None => ("", rest),
        };
        if label.is_some_and(|l| !labels.split(',').any(|pair| pair == l)) {
            continue;
        }
        if let Ok(v) = number.trim().parse::<f64>() {
            found = Some(found.unwrap_or(0.0) + v);
        }
    }
    found
}

/// How many partitions of [`PARTITIONED`] the `project` process on `port` holds; `None` when it
/// does not answer or reports no such gauge.
pub async fn partitions_held(port: u16) -> Option<u32> {
    let label = format!("projection=\"{PARTITIONED}\"");
    let text = scrape(port).await?;
    value(&text, PARTITIONS_HELD, Some(&label)).map(|v| v as u32)
}

/// How many events the relay on `port` has published (0 before its first).
pub async fn published(port: u16) -> Option<u64> {
    let text = scrape(port).await?;
    Some(value(&text, RELAY_PUBLISHED, None).map_or(0, |v| v as u64))
}

/// How many requests the serve on `port` sent to the primary because the replica was behind
/// (0 before the first; `None` when it does not answer).
pub async fn replica_behind(port: u16) -> Option<u64> {
    let text = scrape(port).await?;
    Some(value(&text, REPLICA_BEHIND, None).map_or(0, |v| v as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# TYPE palimpsest_projection_partitions_held gauge\n\
        palimpsest_projection_partitions_held{projection=\"stream_heads\"} 3\n\
        palimpsest_projection_partitions_held{projection=\"other\"} 5\n\
        palimpsest_relay_published_total 120\n\
        palimpsest_relay_published_total_extra 7\n";

    #[test]
    fn a_labelled_sample_is_read_by_its_label() {
        let label = "projection=\"stream_heads\"";
        assert_eq!(value(TEXT, PARTITIONS_HELD, Some(label)), Some(3.0));
        assert_eq!(value(TEXT, PARTITIONS_HELD, None), Some(8.0));
        assert_eq!(value(TEXT, PARTITIONS_HELD, Some("projection=\"x\"")), None);
    }

    #[test]
    fn a_metric_is_not_confused_with_one_whose_name_extends_it() {
        assert_eq!(value(TEXT, RELAY_PUBLISHED, None), Some(120.0));
    }
}
