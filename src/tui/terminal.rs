//! Terminal setup and teardown: the only code that switches the terminal's modes.
//!
//! Restoration happens on every path: [`TerminalGuard`]'s `Drop`, and a panic hook
//! that restores the terminal *before* the panic message is printed (otherwise it
//! lands on the alternate screen and vanishes) and then chains to the previous hook.
//! The hook only touches the terminal while a console owns it (a global flag), so a
//! headless process (e.g. an SSH server) is unaffected.

use std::io::{self, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::{cursor, execute, terminal};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Set while a local console owns the terminal.
static TUI_ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Owns the terminal in raw mode on the alternate screen; restores it when dropped.
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen, and installs the panic hook.
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        terminal::enable_raw_mode()?;
        TUI_ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves the alternate screen and raw mode, if a console owns the terminal.
/// Idempotent; errors are ignored because this runs on failure paths.
pub fn restore() {
    if TUI_ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
    }
}

/// Installs (once) a hook that logs the panic, restores the terminal, then runs the
/// previous hook so the usual message and backtrace print on the normal screen.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let was_active = TUI_ACTIVE.load(Ordering::SeqCst);
            tracing::error!(panic = %info, "panic");
            restore();
            previous(info);
            // A panic in a spawned task would otherwise leave the console running on a
            // restored (cooked) terminal.
            if was_active {
                std::process::exit(101);
            }
        }));
    });
}
