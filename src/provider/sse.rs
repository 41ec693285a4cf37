//! An incremental Server-Sent Events parser.
//!
//! Bytes arrive in arbitrary chunks (a line, a CRLF pair or a UTF-8 sequence
//! may be split anywhere); the parser keeps the unfinished line and the
//! event being built, and hands out whole events as soon as a blank line
//! ends them. It follows the WHATWG event-stream rules: `data:` lines join
//! with `\n`, `:` starts a comment, one space after the colon is dropped,
//! and CR, LF and CRLF all end a line.

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; empty means the default type ("message").
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR, so a leading LF belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk and appends every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut rest = chunk;
        if rest.is_empty() {
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if let [b'\n', tail @ ..] = rest {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let ended_by_cr = rest[pos] == b'\r';
            rest = &rest[pos + 1..];
            if ended_by_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, out);
        }
        self.line.extend_from_slice(rest);
    }

    /// Ends the stream: an event that was complete but for its blank line is
    /// still delivered (some servers close right after the last `data:`).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, out);
        }
        self.dispatch(out);
    }

    fn take_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {} // id, retry and unknown fields carry nothing hew uses
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if self.has_data {
            self.has_data = false;
            out.push(SseEvent { event, data: std::mem::take(&mut self.data) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    #[test]
    fn joins_multi_line_data_and_reads_event_names() {
        let events = parse_all(&[b"event: delta\ndata: one\ndata: two\n\ndata: three\n\n"]);
        assert_eq!(events, vec![ev("delta", "one\ntwo"), ev("", "three")]);
    }

    #[test]
    fn skips_comments_and_unknown_fields_and_keeps_colons_in_values() {
        let events = parse_all(&[b": keep-alive\nid: 7\nretry: 10\ndata: {\"a\": 1}\n\n"]);
        assert_eq!(events, vec![ev("", "{\"a\": 1}")]);
    }

    #[test]
    fn accepts_crlf_and_lone_cr() {
        let events = parse_all(&[b"data: a\r\n\r\ndata: b\r\rdata:c\n\n"]);
        assert_eq!(events, vec![ev("", "a"), ev("", "b"), ev("", "c")]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let events = parse_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(events, vec![ev("", "a\nb")]);
    }

    #[test]
    fn blank_line_without_data_dispatches_nothing_and_resets_event() {
        let events = parse_all(&[b"event: ping\n\ndata: x\n\n"]);
        assert_eq!(events, vec![ev("", "x")]);
    }

    #[test]
    fn final_event_without_blank_line_is_delivered_at_finish() {
        let events = parse_all(&[b"data: [DONE]"]);
        assert_eq!(events, vec![ev("", "[DONE]")]);
    }

    #[test]
    fn utf8_split_inside_a_character_survives() {
        let text = "data: héllo — ok\n\n".as_bytes();
        let (a, b) = text.split_at(8); // inside "é"
        assert_eq!(parse_all(&[a, b]), vec![ev("", "héllo — ok")]);
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(
            cuts in proptest::collection::vec(0usize..200, 0..12),
            crlf in any::<bool>(),
        ) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let body = format!(
                "event: a{nl}data: first{nl}data: sé{nl}{nl}: c{nl}data: [DONE]{nl}{nl}data: x{nl}{nl}"
            );
            let bytes = body.as_bytes();
            let whole = parse_all(&[bytes]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for cut in cuts {
                chunks.push(&bytes[start..cut]);
                start = cut;
            }
            chunks.push(&bytes[start..]);
            prop_assert_eq!(parse_all(&chunks), whole.clone());
            prop_assert_eq!(whole.len(), 3);
        }
    }
}
