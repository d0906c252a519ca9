//! `getText`'s text of the head revision: Etherpad's `getTXTFromAtext`. Plain lines are as they
//! are; a bullet line becomes `* text`, list lines are indented with tabs and numbered lines get
//! their number (`1. `, `1.2. `).

use super::{analyze, lines};
use crate::changes::{AttributePool, Error};
use palimpsest_events::pads::AText;
use std::collections::HashMap;

/// The pad's text as Etherpad's `getText` returns it for the head revision.
pub fn txt(atext: &AText, pool: &AttributePool) -> Result<String, Error> {
    let mut out = String::with_capacity(atext.text.len());
    let mut numbers: HashMap<usize, i64> = HashMap::new();
    let mut prev_level: Option<usize> = None;
    for (text, aline) in lines(atext)? {
        let line = analyze(&text, &aline, pool)?;
        let kind = line.list_type.as_deref();
        let mut content = line.text.clone();
        if kind == Some("bullet") {
            content = format!("* {content}");
        }
        if kind != Some("number") {
            numbers.clear();
        }
        let level = line.list_level;
        if level > 0 {
            for _ in 0..level {
                out.push('\t');
                numbers.entry(level).or_insert(0);
            }
            if kind == Some("number") {
                if let Some(p) = prev_level
                    && level < p
                {
                    numbers.remove(&p);
                }
                *numbers.entry(level).or_insert(0) += 1;
                for x in 1..level {
                    let n = *numbers.entry(x).or_insert(0);
                    out.push_str(&format!("{n}."));
                }
                out.push_str(&format!("{}. ", numbers.get(&level).copied().unwrap_or(0)));
                prev_level = Some(level);
            }
        }
        out.push_str(&content);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_unchanged() {
        let a = AText {
            text: "a\n\nb\n".into(),
            attribs: "|3+5".into(),
        };
        assert_eq!(txt(&a, &AttributePool::new()).expect("txt"), "a\n\nb\n");
    }

    #[test]
    fn lists_get_tabs_bullets_and_numbers() {
        let mut pool = AttributePool::new();
        pool.put_attrib("lmkr", "1");
        pool.put_attrib("list", "bullet1");
        pool.put_attrib("list", "number1");
        pool.put_attrib("list", "number2");
        let a = AText {
            text: "t\n*b\n*n\n*m\n*o\n".into(),
            attribs: "|1+2*0*1+1|1+2*0*2+1|1+2*0*3+1|1+2*0*2+1|1+2".into(),
        };
        assert_eq!(
            txt(&a, &pool).expect("txt"),
            "t\n\t* b\n\t1. n\n\t\t1.1. m\n\t2. o\n"
        );
    }
}
