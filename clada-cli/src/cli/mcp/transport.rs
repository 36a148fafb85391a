//! Newline-delimited JSON-RPC over standard input and output, answering
//! what cannot become a request as JSON-RPC 2.0 says (§5): a line that is
//! not JSON is a parse error (-32700) and one that is JSON but not a
//! message an invalid request (-32600), both with `"id": null` when the id
//! cannot be read; a request whose parameters do not fit its method is
//! -32602 with its id. rmcp's own stdio transport answers a parse error
//! without an `id` and hands a request with wrong parameters to the
//! server as an unknown method.
//!
//! The messages that are well formed go to rmcp as they are; a line is
//! parsed once when it is (the common case) and looked at again only when
//! it is not. Reading never holds more than one line, and a line longer
//! than [`MAX_LINE`] is read through, answered and dropped.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    ClientNotification, ClientRequest, ErrorCode, GetExtensions as _, JsonRpcMessage, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::{Mutex, mpsc};

/// The longest line read: a document at the size limit (50 MiB) with every
/// byte escaped as `\uXXXX`, and room for the rest of the message.
pub(super) const MAX_LINE: usize = 6 * clada_markers::syntax::MAX_DOCUMENT_SIZE + (1 << 20);

/// The capacity a line's buffer keeps between lines: after a large
/// message it is let go, not held for the life of the server.
const KEPT_LINE: usize = 1 << 20;

/// The methods of MCP a client sends: parameters that do not fit one of
/// these are invalid parameters, not an unknown method.
pub(super) const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// The place of an `apply` call in the order the calls were read: the
/// server runs them one after another in that order (PROTOCOL §10.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ticket(pub(super) u64);

/// The requests read and not answered yet, and those of them the client
/// cancelled (`notifications/cancelled`): never answered (MCP).
#[derive(Debug, Default)]
struct Flight {
    open: HashSet<RequestId>,
    cancelled: HashSet<RequestId>,
}

type Output = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// Standard input and output as an rmcp transport.
///
/// Input is read by a task of its own, which hands each message on over
/// a channel: rmcp waits on [`Transport::receive`] beside other work and
/// drops that wait when something else is ready first, so the reading
/// (a line half read, an answer to a malformed line half written) must
/// not live in it. Receiving from a channel loses nothing when dropped.
pub(super) struct Stdio {
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    output: Output,
    flight: Arc<std::sync::Mutex<Flight>>,
    /// Told when the last open request is answered.
    idle: Arc<tokio::sync::Notify>,
}

impl Stdio {
    pub(super) fn new() -> Self {
        Stdio::over(tokio::io::stdin(), tokio::io::stdout())
    }

    /// Reads `input` in a task of its own; must be called in a runtime.
    pub(super) fn over(
        input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        let output: Output = Arc::new(Mutex::new(Box::new(output)));
        let flight = Arc::new(std::sync::Mutex::new(Flight::default()));
        let (tx, messages) = mpsc::channel(64);
        let reader = Reader {
            input: BufReader::with_capacity(1 << 16, input),
            line: Vec::new(),
        };
        tokio::spawn(read(reader, output.clone(), tx, flight.clone()));
        Stdio {
            messages,
            output,
            flight,
            idle: Arc::new(tokio::sync::Notify::new()),
        }
    }
}

/// Lines of input.
struct Reader<R> {
    input: BufReader<R>,
    line: Vec<u8>,
}

impl<R: tokio::io::AsyncRead + Send + Unpin> Reader<R> {
    /// The next line, without its line end; `None` at the end of input.
    /// A line over [`MAX_LINE`] is read through and given back empty with
    /// `true`.
    async fn read_line(&mut self) -> std::io::Result<Option<bool>> {
        self.line.clear();
        if self.line.capacity() > KEPT_LINE {
            self.line = Vec::new();
        }
        let mut too_long = false;
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                return Ok((!self.line.is_empty() || too_long).then_some(too_long));
            }
            let (chunk, done) = match newline(buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if !too_long && self.line.len() + chunk.len() <= MAX_LINE {
                self.line.extend_from_slice(chunk);
            } else {
                too_long = true;
                self.line = Vec::new();
            }
            let used = done.unwrap_or(buf.len());
            self.input.consume(used);
            if done.is_some() {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(Some(too_long));
            }
        }
    }
}

/// Reads every line of input to its end: each message rmcp takes goes on
/// to it, in order; each line it does not take is answered here (or, a
/// notification, not at all), before the next line is read. An `apply`
/// call gets its [`Ticket`]; a cancelled request is noted.
async fn read<R: tokio::io::AsyncRead + Send + Unpin>(
    mut reader: Reader<R>,
    output: Output,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    flight: Arc<std::sync::Mutex<Flight>>,
) {
    let mut tickets = 0;
    loop {
        let too_long = match reader.read_line().await {
            Ok(Some(too_long)) => too_long,
            Ok(None) | Err(_) => return,
        };
        let line = &reader.line;
        if !too_long && line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !too_long {
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            let mut taken = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
                // rmcp reads a request whose parameters do not fit a
                // known method as a custom one: refused here instead.
                Ok(JsonRpcMessage::Request(r))
                    if matches!(&r.request, ClientRequest::CustomRequest(c)
                        if METHODS.contains(&c.method.as_str())) =>
                {
                    None
                }
                // And a request whose id is not one as a notification.
                Ok(JsonRpcMessage::Notification(_)) if has_id(line) => None,
                Ok(message) => Some(message),
                Err(_) => None,
            };
            if let Some(message) = &mut taken {
                let mut flight = flight.lock().unwrap_or_else(|e| e.into_inner());
                match message {
                    JsonRpcMessage::Request(r) => {
                        flight.open.insert(r.id.clone());
                        if let ClientRequest::CallToolRequest(call) = &mut r.request
                            && call.params.name == "apply"
                        {
                            call.extensions_mut().insert(Ticket(tickets));
                            tickets += 1;
                        }
                    }
                    JsonRpcMessage::Notification(n) => {
                        if let ClientNotification::CancelledNotification(c) = &n.notification
                            && flight.open.contains(&c.params.request_id)
                        {
                            flight.cancelled.insert(c.params.request_id.clone());
                        }
                    }
                    _ => {}
                }
            }
            if let Some(message) = taken {
                if tx.send(message).await.is_err() {
                    return;
                }
                continue;
            }
        }
        // Answered here, rmcp never sees it.
        if let Some(answer) = refusal(&reader.line, too_long)
            && write_line(&output, answer.to_string().into_bytes())
                .await
                .is_err()
        {
            return;
        }
    }
}

/// Whether a message has an `id` member: a notification has none.
fn has_id(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, Value>>(line)
        .is_ok_and(|m| m.contains_key("id"))
}

fn newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

async fn write_line(
    output: &Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut out = output.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

fn error(id: Value, code: ErrorCode, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// What to answer a line that is not a message rmcp takes, if anything
/// (a notification is never answered).
fn refusal(line: &[u8], too_long: bool) -> Option<Value> {
    if too_long {
        return Some(error(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid request: a message longer than {} MiB was dropped",
                MAX_LINE >> 20
            ),
        ));
    }
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Some(error(
                Value::Null,
                ErrorCode::PARSE_ERROR,
                format!("Parse error: {e}; each line must be one JSON-RPC message"),
            ));
        }
    };
    let Value::Object(message) = value else {
        let what = if value.is_array() {
            "a batch (MCP sends one message per line)"
        } else {
            "not a JSON object"
        };
        return Some(error(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {what}"),
        ));
    };
    // An id that is not an integer or a string cannot be answered under it.
    let id = match message.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        Some(_) => {
            return Some(error(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                "Invalid request: `id` must be an integer or a string".to_owned(),
            ));
        }
    };
    let method = message.get("method").and_then(Value::as_str);
    match (id, method) {
        // A notification or a response rmcp could not read: nothing to say.
        (None, _) => None,
        (Some(_), None) if message.contains_key("result") || message.contains_key("error") => None,
        (Some(id), None) => Some(error(
            id,
            ErrorCode::INVALID_REQUEST,
            "Invalid request: no `method`".to_owned(),
        )),
        (Some(id), Some(method)) => Some(invalid_params(id, method, message.get("params"))),
    }
}

/// The error of a request of a known method whose parameters rmcp could
/// not read.
fn invalid_params(id: Value, method: &str, params: Option<&Value>) -> Value {
    let why = match (method, params) {
        (_, Some(p)) if !p.is_object() => "`params` must be an object".to_owned(),
        ("tools/call", Some(p)) if p.get("arguments").is_some_and(|a| !a.is_object()) => {
            "`arguments` must be an object, the tool's arguments by name".to_owned()
        }
        ("tools/call", Some(p)) if !p.get("name").is_some_and(Value::is_string) => {
            "`name` must be the tool's name, a string".to_owned()
        }
        _ => format!("the parameters do not fit `{method}`"),
    };
    error(
        id,
        ErrorCode::INVALID_PARAMS,
        format!("Invalid params: {why}"),
    )
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "clada stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        // An answer to a request the client cancelled is not sent (MCP:
        // the client no longer waits for it).
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        let cancelled = id.is_some_and(|id| {
            let mut flight = self.flight.lock().unwrap_or_else(|e| e.into_inner());
            flight.open.remove(id);
            if flight.open.is_empty() {
                self.idle.notify_waiters();
            }
            flight.cancelled.remove(id)
        });
        async move {
            if cancelled {
                return Ok(());
            }
            let bytes = match &item {
                // JSON-RPC 2.0 §5: an error whose request's id could not be
                // read has `"id": null`; rmcp leaves it out.
                JsonRpcMessage::Error(e) if e.id.is_none() => {
                    let mut v = serde_json::to_value(&item)?;
                    v["id"] = Value::Null;
                    serde_json::to_vec(&v)?
                }
                _ => serde_json::to_vec(&item)?,
            };
            write_line(&output, bytes).await
        }
    }

    /// The next message; at the end of input, the end only once every
    /// request read is answered: a client that closes its input right
    /// after its last request gets every answer (rmcp would give the work
    /// still running a few seconds, then drop it).
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let Some(message) = self.messages.recv().await {
            return Some(message);
        }
        loop {
            let answered = self.idle.notified();
            if self
                .flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .open
                .is_empty()
            {
                return None;
            }
            answered.await;
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> Value {
        refusal(line.as_bytes(), false).unwrap_or(Value::Null)
    }

    #[test]
    fn a_line_that_is_not_json_is_a_parse_error_with_a_null_id() {
        let v = refused("not json");
        assert_eq!(v["id"], Value::Null);
        assert!(v.as_object().is_some_and(|o| o.contains_key("id")));
        assert_eq!(v["error"]["code"], -32700);
    }

    #[test]
    fn a_batch_and_a_bad_id_are_invalid_requests() {
        assert_eq!(refused("[1, 2]")["error"]["code"], -32600);
        let v = refused(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#);
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(-32600), Value::Null)
        );
        let v = refused(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(-32600), Value::Null)
        );
        let v = refused(r#"{"jsonrpc":"2.0","id":5}"#);
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(-32600), json!(5))
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_invalid_params() {
        let v = refused(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"check","arguments":"x"}}"#,
        );
        assert_eq!(v["id"], "a");
        assert_eq!(v["error"]["code"], -32602);
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("`arguments`"))
        );
    }

    #[test]
    fn a_notification_is_never_answered() {
        assert!(refusal(br#"{"jsonrpc":"2.0","method":"x","params":3}"#, false).is_none());
    }

    #[test]
    fn a_line_too_long_is_refused_without_being_kept() {
        let v = refusal(b"", true).unwrap_or(Value::Null);
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(-32600), Value::Null)
        );
    }
}
