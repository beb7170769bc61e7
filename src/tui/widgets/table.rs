//! A virtualised table: only the rows that fit are built, so a list of 100,000
//! workloads costs the same per frame as a list of twenty.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Row, Table};

use crate::tui::Theme;
use crate::tui::app::ListState;

/// What a table shows; rows are produced on demand by position.
pub struct TableSpec<'a> {
    pub title: Line<'a>,
    pub header: Vec<&'a str>,
    pub widths: Vec<Constraint>,
    /// Number of rows after filtering.
    pub len: usize,
    pub list: ListState,
    /// Shown when there are no rows.
    pub empty: &'a str,
}

/// Column widths as the table will lay them out inside a bordered `area` (one cell
/// of spacing), so cells can be truncated with "…" instead of being cut silently.
pub fn resolve_widths(area: Rect, constraints: &[Constraint]) -> Vec<u16> {
    let inner = Rect {
        width: area.width.saturating_sub(2),
        ..area
    };
    Layout::horizontal(constraints.iter().copied())
        .spacing(1)
        .split(inner)
        .iter()
        .map(|r| r.width)
        .collect()
}

/// The first visible position: the stored offset, corrected so the selection shows.
pub fn visible_offset(list: ListState, len: usize, height: usize) -> usize {
    let height = height.max(1);
    let mut offset = list.offset.min(len.saturating_sub(1));
    if list.selected < offset {
        offset = list.selected;
    } else if list.selected >= offset + height {
        offset = list.selected + 1 - height;
    }
    offset
}

/// Draws the table, calling `row(position)` for the visible positions only.
pub fn render<'a>(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    spec: TableSpec<'a>,
    row: impl Fn(usize) -> Row<'a>,
) {
    let counter = if spec.len == 0 {
        String::from(" 0 ")
    } else {
        format!(" {}/{} ", spec.list.selected + 1, spec.len)
    };
    let block = Block::bordered()
        .border_style(theme.border)
        .title(spec.title.style(theme.title))
        .title_bottom(Line::from(counter).style(theme.muted).right_aligned());
    if spec.len == 0 {
        let text = Paragraph::new(Line::from(spec.empty).style(theme.muted)).block(block);
        frame.render_widget(text, area);
        return;
    }
    // Borders and the header row take three lines.
    let height = usize::from(area.height.saturating_sub(3));
    let offset = visible_offset(spec.list, spec.len, height);
    let end = (offset + height).min(spec.len);
    let rows: Vec<Row> = (offset..end)
        .map(|pos| {
            let r = row(pos);
            if pos == spec.list.selected {
                r.style(theme.selection)
            } else {
                r
            }
        })
        .collect();
    let table = Table::new(rows, spec.widths)
        .header(Row::new(spec.header).style(theme.header))
        .column_spacing(1)
        .style(theme.text)
        .block(block);
    frame.render_widget(table, area);
}
