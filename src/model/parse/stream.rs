//! Reading a JSON `List` (`kubectl get ... -o json`) one item at a time.
//!
//! The general path decodes a whole document into a `serde_json::Value` before reading
//! it; for a dump of 78,000 objects that tree is most of the process's memory. A file that
//! is one JSON object of kind `List` (or `XList` with `items`) is read here instead: a
//! first pass reads only its `kind` and `apiVersion` (skipping the items without
//! building them, and checking the syntax of the whole file), a second pass decodes the
//! items one by one and hands each to the loader, so at most one item's `Value` is alive.
//! Anything else (several documents, not an object, a field of the wrong type) goes the
//! general way, which reports errors exactly as before: the fast path adds nothing before
//! it has decided to take the file, and the items are handled by the same code
//! ([`Loader::add_list_item`]), with the same paths in errors (`items[i]...`).

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{Loader, ParseError};
use crate::model::types::Origin;

#[derive(Deserialize)]
struct Head {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    items: Option<IgnoredAny>,
}

/// Reads `text` as one JSON List if it is one; `Ok(false)` means "not handled here"
/// (nothing was added).
pub(super) fn add_json_list(
    loader: &mut Loader,
    source: &str,
    text: &str,
) -> Result<bool, ParseError> {
    let text = text.trim_start_matches('\u{feff}');
    if !text.trim_start().starts_with('{') {
        return Ok(false);
    }
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return Ok(false);
    };
    let Some(kind) = head.kind else {
        return Ok(false);
    };
    if head.items.is_none() || !(kind == "List" || kind.ends_with("List")) {
        return Ok(false);
    }
    let origin = Origin {
        source: source.to_string(),
        document: 0,
    };
    let mut top = Top {
        loader,
        origin: &origin,
        kind: &kind,
        api_version: head.api_version.as_deref(),
        error: None,
        added: 0,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    match (&mut top).deserialize(&mut de) {
        Ok(()) => Ok(true),
        Err(_) if top.error.is_some() => Err(top.error.take().expect("checked")),
        // `items` is not an array: the general path names the field
        Err(_) if top.added == 0 => Ok(false),
        Err(e) => Err(ParseError {
            source: source.to_string(),
            document: Some(0),
            object: None,
            path: None,
            message: format!("invalid JSON: {e}"),
        }),
    }
}

struct Top<'a> {
    loader: &'a mut Loader,
    origin: &'a Origin,
    kind: &'a str,
    api_version: Option<&'a str>,
    /// The loader's error for an item (the decoding stops there).
    error: Option<ParseError>,
    added: usize,
}

impl<'de> DeserializeSeed<'de> for &mut Top<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a List object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen_items = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "items" && !seen_items {
                seen_items = true;
                map.next_value_seed(Items(&mut *self))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Items<'t, 'a>(&'t mut Top<'a>);

impl<'de> DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(()) // `items: null`
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let top = self.0;
        let mut i = 0;
        while let Some(item) = seq.next_element::<Value>()? {
            let res =
                top.loader
                    .add_list_item(top.origin, top.kind, top.api_version, &item, i, "", 0);
            if let Err(e) = res {
                top.error = Some(e);
                return Err(de::Error::custom("item rejected"));
            }
            top.added += 1;
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Loader, documents};

    fn both(source: &str, text: &str) -> (Loader, Loader) {
        let mut streamed = Loader::new();
        assert!(super::add_json_list(&mut streamed, source, text).unwrap());
        let mut general = Loader::new();
        for (document, v) in documents::split_documents(source, text)
            .unwrap()
            .iter()
            .enumerate()
        {
            let origin = super::Origin {
                source: source.to_string(),
                document,
            };
            general.add_value(origin, v).unwrap();
        }
        (streamed, general)
    }

    #[test]
    fn a_list_reads_the_same_streamed_or_whole() {
        let text = r#"{"apiVersion": "v1", "items": [
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"x": "y"}}},
            {"apiVersion": "v1", "kind": "Mystery", "metadata": {"name": "m"}}
        ], "kind": "List", "metadata": {"resourceVersion": ""}}"#;
        let (a, b) = both("dump.json", text);
        assert_eq!(format!("{:?}", a.finish()), format!("{:?}", b.finish()));
    }

    #[test]
    fn typed_list_items_get_kind_and_api_version() {
        let text = r#"{"apiVersion": "v1", "kind": "NamespaceList",
            "items": [{"metadata": {"name": "team"}}]}"#;
        let (a, b) = both("ns.json", text);
        let (a, b) = (a.finish(), b.finish());
        assert!(a.namespaces.contains_key("team"), "{:?}", a.namespaces);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn an_item_error_names_its_index_as_before() {
        let text = r#"{"kind": "List", "apiVersion": "v1", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ok"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {}}}
        ]}"#;
        let mut l = Loader::new();
        let streamed = super::add_json_list(&mut l, "d.json", text).unwrap_err();
        let mut l = Loader::new();
        let general = l.add_value(
            super::Origin {
                source: "d.json".into(),
                document: 0,
            },
            &serde_json::from_str(text).unwrap(),
        );
        assert_eq!(Err(streamed.clone()), general);
        assert!(streamed.to_string().contains("items[1]"), "{streamed}");
    }

    #[test]
    fn anything_else_is_left_to_the_general_path() {
        let mut l = Loader::new();
        for text in [
            r#"{"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "a"}}"#,
            r#"{"kind": "List", "items": []} {"kind": "List", "items": []}"#,
            r#"{"kind": "List", "items": 3}"#,
            r#"{"kind": 3, "items": []}"#,
            r#"[{"kind": "List", "items": []}]"#,
            "kind: List\nitems: []\n",
        ] {
            assert!(
                !super::add_json_list(&mut l, "x.json", text).unwrap(),
                "{text}"
            );
        }
        assert_eq!(
            format!("{:?}", l.finish()),
            format!("{:?}", Loader::new().finish())
        );
    }
}
