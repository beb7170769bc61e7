//! Splitting a file's text into documents: multi-document YAML (`---`), JSON (one
//! value or several concatenated), in whatever mix `kubectl get -o yaml|json` prints.

use serde::Deserialize;
use serde_json::Value;

use super::error::ParseError;

/// Decodes every document of `text`. Empty documents come back as `Value::Null` so that
/// document indices match the `---` separators a human counts.
///
/// The text's nesting is checked first, in linear time ([`super::check_nesting`]): a
/// deeper text is refused naming the source, the line and the limit, before the
/// parser (whose cost on deep nesting is quadratic) sees it.
pub fn split_documents(source: &str, text: &str) -> Result<Vec<Value>, ParseError> {
    if let Err(e) = super::check_nesting(text.as_bytes(), super::MAX_NESTING_DEPTH) {
        return Err(ParseError::source_error(source, e.to_string()));
    }
    let looks_json = source.ends_with(".json")
        || text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with(['{', '[']);
    if looks_json {
        match split_json(source, text) {
            Ok(docs) => return Ok(docs),
            // A `.json` file must be JSON; anything else may be flow-style YAML.
            Err(e) if source.ends_with(".json") => return Err(e),
            Err(_) => {}
        }
    }
    split_yaml(source, text)
}

fn doc_error(source: &str, document: usize, message: String) -> ParseError {
    ParseError {
        source: source.to_string(),
        document: Some(document),
        object: None,
        path: None,
        message,
    }
}

fn split_json(source: &str, text: &str) -> Result<Vec<Value>, ParseError> {
    let text = text.trim_start_matches('\u{feff}');
    let mut docs = Vec::new();
    for (i, item) in serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .enumerate()
    {
        match item {
            Ok(v) => docs.push(v),
            Err(e) => return Err(doc_error(source, i, format!("invalid JSON: {e}"))),
        }
    }
    Ok(docs)
}

/// Whether [`split_documents`] would try `text` as JSON first.
pub fn looks_json(source: &str, text: &str) -> bool {
    source.ends_with(".json")
        || text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with(['{', '['])
}

/// Decodes the YAML documents of `text` one at a time, handing each to `f` before the
/// next is decoded (a large multi-document dump never exists as one tree of `Value`s).
/// Errors as [`split_documents`] names them; `f`'s error stops the reading.
pub fn for_each_yaml_document(
    source: &str,
    text: &str,
    mut f: impl FnMut(usize, Value) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    for (i, de) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        match Value::deserialize(de) {
            Ok(v) => f(i, v)?,
            Err(e) => return Err(doc_error(source, i, format!("invalid YAML: {e}"))),
        }
    }
    Ok(())
}

fn split_yaml(source: &str, text: &str) -> Result<Vec<Value>, ParseError> {
    let mut docs = Vec::new();
    for (i, de) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        match Value::deserialize(de) {
            Ok(v) => docs.push(v),
            // The YAML stream cannot be resynchronised after a syntax error.
            Err(e) => return Err(doc_error(source, i, format!("invalid YAML: {e}"))),
        }
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_multi_document_with_empty_ones() {
        let docs = split_documents("a.yaml", "---\nkind: A\n---\n---\nkind: B\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert!(docs[1].is_null());
        assert_eq!(docs[2]["kind"], "B");
    }

    #[test]
    fn json_stream_and_flow_yaml() {
        let docs = split_documents("a.json", "{\"kind\":\"A\"}\n{\"kind\":\"B\"}").unwrap();
        assert_eq!(docs.len(), 2);
        let docs = split_documents("a.yaml", "{kind: A, spec: {x: 1}}").unwrap();
        assert_eq!(docs[0]["spec"]["x"], 1);
        let err = split_documents("a.json", "{\"kind\": }").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("a.json: document 1: invalid JSON"),
            "{err}"
        );
    }

    #[test]
    fn yaml_syntax_error_names_document() {
        let err = split_documents("a.yaml", "kind: A\n---\nkind: [B\n").unwrap_err();
        assert_eq!(err.document, Some(1));
        assert!(err.message.starts_with("invalid YAML"), "{err}");
    }
}
