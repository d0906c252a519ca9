//! `setHTML`: Etherpad's HTML import (`ImportHtml.setPadHTML`), without plugins.
//!
//! Etherpad parses the HTML (rehype, i.e. parse5), minifies its white space
//! (`rehype-minify-whitespace`), parses the result again into a DOM (jsdom), appends an empty
//! `<p>` to the body so a caret has a line below the import, and walks the body with its
//! *content collector* (`contentcollector.ts`), which turns the DOM into lines of text with
//! attributes: block elements (`div`, `p`, `pre`, `li`) and `<br>` end lines; `b`/`strong`,
//! `i`/`em`, `u`/`ins`, `s`/`del` (and the matching `style` properties) are bold, italic,
//! underline, strikethrough; `ul`/`ol` make list lines (a `*` line marker carrying
//! `lmkr`, `insertorder`, `list` and `start`); `script` and `style` are dropped; any other
//! element's text is kept. The pad is then set to `"\n"` and the lines are appended as one
//! revision.
//!
//! - [`tree`]: the parsed body as a small tree (html5ever builds the same tree parse5 does);
//! - [`whitespace`]: `hast-util-minify-whitespace` on that tree;
//! - [`collector`]: the content collector, producing lines and their attribute runs;
//! - [`html`]: the `setHTML` decider.
//!
//! Checked against what real Etherpad 2.5.3 stored for the same HTML
//! (`tests/fixtures/etherpad/set_html.json`).

pub mod collector;
pub mod html;
pub mod tree;
pub mod whitespace;

pub use html::set_html;
