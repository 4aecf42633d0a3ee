//! Output of `sqliosim bench`: the console report ([`text`]), JSON and CSV files
//! ([`export`]) and the HTML page with SVG curves ([`html`]). Each returns bytes or a
//! `String`; the command decides where they go.

pub mod export;
pub mod html;
pub mod text;
