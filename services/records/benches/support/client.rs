//! The write phases' load generator: one HTTP/1.1 connection kept alive per client, each
//! request written whole and each answer read by its `Content-Length`, nothing more.
//!
//! The clients run on the machine's two cores beside the server and Postgres, so what they
//! spend is taken from what is measured. A general client (reqwest: a pool checkout, a task per
//! connection and a channel hop to it, a URL parsed and a header map built per request) cost
//! the machine ~13 µs more a request than this one (the floor of HTTP alone: 29–31 µs of CPU a
//! request with reqwest, 16–19 with this), work no server does for its own clients. This one,
//! like `wrk`, spends only the serialising of the body and the system calls. The floor of HTTP
//! alone uses the same generator, so the comparison stays like for like.

use std::io;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One client's connection.
pub struct Connection {
    stream: TcpStream,
    host: String,
    read: Vec<u8>,
}

/// An answer: its status and body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Connection {
    /// Connects to `addr`.
    pub async fn open(addr: SocketAddr) -> io::Result<Connection> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream,
            host: addr.to_string(),
            read: Vec::with_capacity(4096),
        })
    }

    /// `POST path` with `body` as JSON and `token` as bearer, and its answer.
    pub async fn post(&mut self, path: &str, token: &str, body: &[u8]) -> io::Result<Answer> {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {token}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n",
            self.host,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        self.stream.write_all(&request).await?;
        self.answer().await
    }

    async fn answer(&mut self) -> io::Result<Answer> {
        self.read.clear();
        let head = loop {
            if let Some(end) = self.read.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            self.fill().await?;
        };
        let (status, length) = parse_head(&self.read[..head])?;
        while self.read.len() < head + length {
            self.fill().await?;
        }
        Ok(Answer {
            status,
            body: self.read[head..head + length].to_vec(),
        })
    }

    async fn fill(&mut self) -> io::Result<()> {
        if self.stream.read_buf(&mut self.read).await? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        Ok(())
    }
}

/// The status and `Content-Length` of an answer's head.
fn parse_head(head: &[u8]) -> io::Result<(u16, usize)> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let text = std::str::from_utf8(head).map_err(|_| bad("a head that is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let length = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .ok_or_else(|| bad("an answer without Content-Length"))?;
    Ok((status, length))
}
