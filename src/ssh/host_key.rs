//! The server's host key: loaded from a file, or generated (ed25519) on first run and
//! stored with mode 0600 so clients see the same host key across restarts.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use russh::keys::{Algorithm, HashAlg, PrivateKey};

/// File name used under the state directory.
pub const DEFAULT_FILE_NAME: &str = "ssh_host_ed25519_key";

/// A loaded host key.
#[derive(Debug)]
pub struct HostKey {
    /// The private key handed to russh.
    pub key: PrivateKey,
    /// Where it lives.
    pub path: PathBuf,
    /// `SHA256:…` fingerprint (what `ssh` shows on first connect).
    pub fingerprint: String,
    /// Whether this call generated it.
    pub generated: bool,
}

/// Default host key path: `$XDG_STATE_HOME/gangplank/ssh_host_ed25519_key` (falling back
/// to the local data dir where there is no state dir, e.g. macOS).
pub fn default_host_key_path() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "gangplank")?;
    let base = dirs
        .state_dir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dirs.data_local_dir().to_path_buf());
    Some(base.join(DEFAULT_FILE_NAME))
}

/// Load the key at `path`, or generate and store a new ed25519 key there if the file
/// does not exist.
pub fn load_or_generate(path: &Path) -> Result<HostKey> {
    if path.exists() {
        warn_if_too_open(path);
        let key = russh::keys::load_secret_key(path, None)
            .with_context(|| format!("loading SSH host key {}", path.display()))?;
        let fingerprint = key.public_key().fingerprint(HashAlg::Sha256).to_string();
        return Ok(HostKey {
            key,
            path: path.to_path_buf(),
            fingerprint,
            generated: false,
        });
    }
    let key = PrivateKey::random(&mut rand::rng(), Algorithm::Ed25519)
        .context("generating ed25519 host key")?;
    let pem = key
        .to_openssh(russh::keys::ssh_key::LineEnding::LF)
        .context("encoding host key")?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating host key directory {}", dir.display()))?;
    }
    write_private(path, pem.as_bytes())
        .with_context(|| format!("writing SSH host key {}", path.display()))?;
    let fingerprint = key.public_key().fingerprint(HashAlg::Sha256).to_string();
    tracing::info!(path = %path.display(), %fingerprint, "generated SSH host key");
    Ok(HostKey {
        key,
        path: path.to_path_buf(),
        fingerprint,
        generated: true,
    })
}

/// Create the file with 0600 from the start (not chmod after writing, which would leave
/// a window where the key is world-readable) and never overwrite an existing file.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn warn_if_too_open(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            // Group-readable is tolerated: a Kubernetes Secret mounted for a non-root
            // user needs 0440 with fsGroup.
            if mode & 0o007 != 0 {
                tracing::warn!(path = %path.display(), mode = format!("{mode:o}"),
                    "SSH host key is accessible to others; chmod 600 it");
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
