//! Kueue's configuration from the live cluster: the ConfigMap
//! `kueue-system/kueue-manager-config`, read once when a source starts (Kueue itself
//! reads it once at start-up; a change needs a restart of Kueue's manager, and of the
//! console). Missing or forbidden: a warning and Kueue's defaults, never a failure.

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

use crate::model::kueue_config::{
    self, CONFIG_MAP_KEY, CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, KueueConfig,
};

/// Kueue's configuration from the ConfigMap, once: `None` plus a warning when it is
/// missing or cannot be read (no RBAC); an error only for a transport failure or a
/// ConfigMap that is not a valid Configuration.
pub async fn fetch(client: kube::Client) -> Result<(Option<KueueConfig>, Vec<String>)> {
    let api: Api<ConfigMap> = Api::namespaced(client, CONFIG_MAP_NAMESPACE);
    let what = format!("ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME}");
    match api.get_opt(CONFIG_MAP_NAME).await {
        Ok(Some(cm)) => {
            let Some(text) = cm.data.as_ref().and_then(|d| d.get(CONFIG_MAP_KEY)) else {
                return Ok((None, vec![format!("{what} has no key {CONFIG_MAP_KEY}")]));
            };
            let cfg = kueue_config::parse_configuration(text, &what)
                .map_err(|e| anyhow::anyhow!(e.to_string()))?;
            Ok((Some(cfg), Vec::new()))
        }
        Ok(None) => Ok((None, vec![format!("{what} not found")])),
        Err(kube::Error::Api(s)) if s.code == 403 => Ok((
            None,
            vec![format!(
                "cannot read {what} (forbidden: {}); showing Kueue's defaults",
                s.message
            )],
        )),
        Err(e) => Err(e).context(format!("cannot read {what}")),
    }
}
