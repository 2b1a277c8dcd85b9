//! `gangs rules KIND`: the game's options (key, type, default, range, meaning), printed from
//! the engine's own option schema, so this help can never drift from the code. The rules
//! themselves are in the repository's `docs/rules/KIND.md`.

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use serde_json::json;

#[derive(Args)]
pub struct RulesArgs {
    #[arg(help = format!("The game: {}.", gangs_games::kind_names_help()))]
    kind: String,
}

pub async fn run(args: RulesArgs, context: &Context) -> Result<(), CliError> {
    let kind = gangs_games::kind(&args.kind).map_err(|e| CliError::invalid(e.to_string()))?;
    let rows: Vec<[String; 5]> = kind
        .options()
        .iter()
        .map(|spec| {
            [
                spec.key.to_string(),
                spec.kind.name().to_string(),
                spec.default.to_string(),
                spec.accepts(),
                spec.meaning.to_string(),
            ]
        })
        .collect();
    let value = json!({
        "kind": kind.name,
        "rules": format!("docs/rules/{}.md", kind.name),
        "options": rows.iter().map(|[key, kind, default, range, meaning]| json!({
            "key": key, "type": kind, "default": default, "range": range, "meaning": meaning,
        })).collect::<Vec<_>>(),
    });
    context.out.emit(value, || table(kind.name, &rows));
    Ok(())
}

/// Aligned columns; the meaning last, unwrapped.
fn table(kind: &str, rows: &[[String; 5]]) -> String {
    let header = ["key", "type", "default", "range", "meaning"].map(str::to_string);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |row: &[String; 5]| {
        let mut out = String::new();
        for (cell, w) in row.iter().zip(widths) {
            out.push_str(cell);
            out.push_str(&" ".repeat(w - cell.chars().count() + 2));
        }
        out.push_str(&row[4]);
        out
    };
    let mut out = format!(
        "{kind} options (gangs new {kind} --option key=value; rules: docs/rules/{kind}.md)\n"
    );
    out.push_str(&line(&header));
    for row in rows {
        out.push('\n');
        out.push_str(&line(row));
    }
    out
}
