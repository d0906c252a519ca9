//! libFuzzer target: arbitrary bytes as an attribute pool's JSON, an attributed text's JSON
//! and an attribution. Nothing may panic; what is accepted must be self-consistent.
#![no_main]

use easysync::{AText, AttributePool, Changeset, apply_to_attribution, split_attribution_lines};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    if let Ok(pool) = serde_json::from_str::<AttributePool>(&s) {
        let _ = pool.check();
        let json = serde_json::to_string(&pool).expect("serialisable");
        let back: AttributePool = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, pool);
    }
    if let Ok(atext) = serde_json::from_str::<AText>(&s)
        && atext.check(None).is_ok()
    {
        let lines = split_attribution_lines(&atext.attribs, &atext.text).expect("consistent");
        assert_eq!(lines.len(), atext.text.matches('\n').count());
        let id = Changeset::identity(atext.length());
        assert_eq!(
            atext.apply(&id, &AttributePool::new()).expect("identity"),
            atext
        );
    }
    let _ = AText::from_parts("ab\ncd\n", s.as_ref());
    let _ = apply_to_attribution(&Changeset::identity(6), &s, &AttributePool::new());
    let _ = split_attribution_lines(&s, "ab\ncd\n");
    let _ = easysync::subattribution(&s, 1, Some(4));
});
