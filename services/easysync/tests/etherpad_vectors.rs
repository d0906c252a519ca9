//! Test vectors from Etherpad-lite's own easysync specs that exercise several modules at once
//! (the single-module vectors live next to their module).

use easysync::{
    AText, AttributePool, Changeset, apply_to_atext, apply_to_attribution, apply_to_text,
    join_attribution_lines, num_to_string,
};

fn pool_of(pairs: &[&str]) -> AttributePool {
    let mut p = AttributePool::new();
    for kv in pairs {
        let (k, v) = kv.split_once(',').unwrap();
        p.put_attrib(k, v);
    }
    p
}

/// Etherpad's `testPoolWithChars`: `char=newline`, `char=1` .. `char=z`, `char=`.
fn pool_with_chars() -> AttributePool {
    let mut p = AttributePool::new();
    p.put_attrib("char", "newline");
    for i in 1..36 {
        p.put_attrib("char", &num_to_string(i));
    }
    p.put_attrib("char", "");
    p
}

/// Etherpad's `runMutateAttributionTest`, checked the way its second half does: the per-line
/// attributions joined, then `applyToAttribution` on the joined form.
fn mutate_attribution(pool: &AttributePool, cs: &str, alines: &[&str], correct: &[&str]) {
    let cs = Changeset::parse(cs).unwrap();
    cs.check(Some(pool)).unwrap();
    let strip =
        |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| l.replace('?', "")).collect() };
    let in_merged = join_attribution_lines(&strip(alines)).unwrap();
    let correct_merged = join_attribution_lines(&strip(correct)).unwrap();
    assert_eq!(
        apply_to_attribution(&cs, &in_merged, pool).unwrap(),
        correct_merged,
        "{cs}"
    );
}

#[test]
fn mutate_attribution_1_bold_one_char() {
    // turn 123\n 456\n 789\n into 123\n 4<b>5</b>6\n 789\n
    mutate_attribution(
        &pool_of(&["bold,true"]),
        "Z:c>0|1=4=1*0=1$",
        &["|1+4", "|1+4", "|1+4"],
        &["|1+4", "+1*0+1|1+2", "|1+4"],
    );
}

#[test]
fn mutate_attribution_2_bold_document() {
    mutate_attribution(
        &pool_of(&["bold,true"]),
        "Z:c>0*0|3=c$",
        &["|1+4", "|1+4", "|1+4"],
        &["*0|1+4", "*0|1+4", "*0|1+4"],
    );
}

#[test]
fn mutate_attribution_3_clear_bold() {
    mutate_attribution(
        &pool_of(&["bold,", "bold,true"]),
        "Z:c>0*0|3=c$",
        &["*1+1+1*1+1|1+1", "+1*1+1|1+2", "*1+1+1*1+1|1+1"],
        &["|1+4", "|1+4", "|1+4"],
    );
}

#[test]
fn mutate_attribution_4_insert_on_line_3() {
    mutate_attribution(
        &pool_of(&["foo,bar", "line,1", "line,2", "line,3", "line,4", "line,5"]),
        "Z:5>1|2=2+1$x",
        &["?*1|1+1", "?*2|1+1", "*3|1+1", "?*4|1+1", "?*5|1+1"],
        &["?*1|1+1", "?*2|1+1", "+1*3|1+1", "?*4|1+1", "?*5|1+1"],
    );
}

#[test]
fn mutate_attribution_5_to_11_char_pool() {
    let p = pool_with_chars();
    mutate_attribution(
        &p,
        "Z:11>7-2*t+1*u+1|2=b|2+a=2*b+1*o+1*t+1*0|1+1*b+1*u+1=3|1-3-6$tucream\npie\nbot\nbu",
        &[
            "*a+1*p+2*l+1*e+1*0|1+1",
            "*b+1*a+1*n+1*a+1*n+1*a+1*0|1+1",
            "*c+1*a+1*b+2*a+1*g+1*e+1*0|1+1",
            "*d+1*u+1*f+2*l+1*e+1*0|1+1",
            "*e+1*g+2*p+1*l+1*a+1*n+1*t+1*0|1+1",
        ],
        &[
            "*t+1*u+1*p+1*l+1*e+1*0|1+1",
            "*b+1*a+1*n+1*a+1*n+1*a+1*0|1+1",
            "|1+6",
            "|1+4",
            "*c+1*a+1*b+1*o+1*t+1*0|1+1",
            "*b+1*u+1*b+2*a+1*0|1+1",
            "*e+1*g+2*p+1*l+1*a+1*n+1*t+1*0|1+1",
        ],
    );
    mutate_attribution(
        &p,
        "Z:11<f|1-6|2=f=6|1-1-8$",
        &["*a|1+6", "*b|1+7", "*c|1+8", "*d|1+7", "*e|1+9"],
        &["*b|1+7", "*c|1+8", "*d+6*e|1+1"],
    );
    mutate_attribution(
        &p,
        "Z:3>7=1|4+7$\n2\n3\n4\n",
        &["*1+1*5|1+2"],
        &["*1+1|1+1", "|1+2", "|1+2", "|1+2", "*5|1+2"],
    );
    mutate_attribution(
        &p,
        "Z:a<7=1|4-7$",
        &["*1|1+2", "*2|1+2", "*3|1+2", "*4|1+2", "*5|1+2"],
        &["*1+1*5|1+2"],
    );
    mutate_attribution(
        &p,
        "Z:k<7*0+1*10|2=8|2-8$0",
        &[
            "*1+1*2+1*3+1|1+1",
            "*a+1*b+1*c+1|1+1",
            "*d+1*e+1*f+1|1+1",
            "*g+1*h+1*i+1|1+1",
            "?*x+1*y+1*z+1|1+1",
        ],
        &["*0+1|1+4", "|1+4", "?*x+1*y+1*z+1|1+1"],
    );
    mutate_attribution(
        &p,
        "Z:6>4=1+1=1+1|1=1+1=1*0+1$abcd",
        &["|1+3", "|1+3"],
        &["|1+5", "+2*0+1|1+2"],
    );
    mutate_attribution(
        &p,
        "Z:s>1|1=4=6|1+1$\n",
        &[
            "*0|1+4", "*0|1+8", "*0+5|1+1", "*0|1+1", "*0|1+5", "*0|1+1", "*0|1+1", "*0|1+1",
            "|1+1",
        ],
        &[
            "*0|1+4", "*0+6|1+1", "*0|1+2", "*0+5|1+1", "*0|1+1", "*0|1+5", "*0|1+1", "*0|1+1",
            "*0|1+1", "|1+1",
        ],
    );
}

#[test]
fn mutation_texts_match_attribution_lengths() {
    // The text side of runMutateAttributionTest #5 (Etherpad's runMutationTest #1).
    let cs = Changeset::parse(
        "Z:11>7-2*t+1*u+1|2=b|2+a=2*b+1*o+1*t+1*0|1+1*b+1*u+1=3|1-3-6$tucream\npie\nbot\nbu",
    )
    .unwrap();
    let before = "apple\nbanana\ncabbage\nduffle\neggplant\n";
    assert_eq!(
        apply_to_text(&cs, before).unwrap(),
        "tuple\nbanana\ncream\npie\ncabot\nbubba\neggplant\n"
    );
}

#[test]
fn pad_lifecycle_like_etherpad_server() {
    // A pad is created from "\n" with a splice, then edited by two clients concurrently; the
    // server rebases the second over the first, as PadMessageHandler does.
    let mut pool = AttributePool::new();
    let author_a = pool.put_attrib("author", "a.alice");
    let author_b = pool.put_attrib("author", "a.bob");
    let blank = AText::new("\n").unwrap();
    let create = easysync::splice_text(&blank.text, 0, 0, "Hello world", "")
        .unwrap()
        .unwrap();
    let rev1 = apply_to_atext(&create, &blank, &pool).unwrap();
    assert_eq!(rev1.text, "Hello world\n");

    let a = format!("Z:c>1=5*{author_a}+1$,");
    let b = format!("Z:c>1=b*{author_b}+1$!");
    let a = Changeset::parse(&a).unwrap();
    let b = Changeset::parse(&b).unwrap();
    a.check(Some(&pool)).unwrap();
    let rev2 = apply_to_atext(&a, &rev1, &pool).unwrap();
    let b_rebased = easysync::follow(&a, &b, false, &pool).unwrap();
    let rev3 = apply_to_atext(&b_rebased, &rev2, &pool).unwrap();
    assert_eq!(rev3.text, "Hello, world!\n");
    assert_eq!(rev3.attribs, "+5*0+1+6*1+1|1+1");
    rev3.check(Some(&pool)).unwrap();
    assert_eq!(
        serde_json::to_string(&rev3).unwrap(),
        r#"{"text":"Hello, world!\n","attribs":"+5*0+1+6*1+1|1+1"}"#
    );
}
