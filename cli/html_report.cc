#include "lockstep/cli/html_report.h"

#include "lockstep/cli/markup.h"

#include <fmt/format.h>

namespace lockstep::cli {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The kind of an event, for its colour.
std::string_view kind_of(const sim::LogEvent& e) {
  const std::string_view op = e.op;
  if (e.result == "timeout") return "timeout";
  if (starts_with(op, "choose")) return "choice";
  if (starts_with(op, "observe")) return "observe";
  if (op.find("_wait") != std::string_view::npos || starts_with(op, "sleep")) return "wait";
  if (starts_with(op, "unlock") || starts_with(op, "runlock") || starts_with(op, "release") || starts_with(op, "close") ||
      starts_with(op, "flock_un") || starts_with(op, "flock_drop")) {
    return "release";
  }
  if (starts_with(op, "lock") || starts_with(op, "rlock") || starts_with(op, "acquire") || starts_with(op, "try_") ||
      starts_with(op, "flock")) {
    return e.result == "failed" ? "failed" : "acquire";
  }
  return "data";
}

std::string time_text(std::int64_t ns) {
  if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d1d1f; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: #555; margin: 2px 0; }
pre.replay { background: #f4f4f6; padding: 8px 12px; border-radius: 6px; overflow-x: auto; }
.verdict { font-weight: 600; padding: 6px 10px; border-radius: 6px; display: inline-block; }
.verdict.failure { background: #fde2e1; color: #8a1c14; }
.verdict.pass { background: #e3f5e5; color: #1b5e20; }
table.swimlanes { border-collapse: collapse; margin-top: 16px; }
table.swimlanes th, table.swimlanes td { border: 1px solid #e2e2e6; padding: 3px 8px; vertical-align: top; }
th.lane { background: #f0f0f4; min-width: 180px; }
td.step, td.time { color: #777; text-align: right; font-variant-numeric: tabular-nums; }
td.ev { font-family: ui-monospace, monospace; font-size: 13px; }
td.acquire { background: #e3f5e5; } td.release { background: #e4eefb; } td.wait { background: #fff4d6; }
td.timeout { background: #ffe0b2; font-weight: 600; } td.failed { background: #f3e5f5; }
td.choice { background: #fde2e1; font-weight: 600; } td.observe { background: #f4f4f6; color: #555; }
tr#violation td { background: #8a1c14; color: white; font-weight: 600; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 6px; border-radius: 4px; font-size: 12px; }
)";

}  // namespace

std::string html_report(const sim::Trace& t, const std::string& replay_command) {
  const std::string name = t.scenario.is_object() ? t.scenario.value("name", "trace") : "trace";
  const std::string description = t.scenario.is_object() ? t.scenario.value("description", "") : "";
  const bool failure = is_failure(t.verdict);
  std::string out;
  out += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>lockstep: {}</title><style>{}</style></head><body>\n", escape_markup(name), kStyle);
  out += fmt::format("<h1>{}</h1>\n", escape_markup(name));
  if (!description.empty()) out += fmt::format("<p class=\"meta\">{}</p>\n", escape_markup(description));
  out += fmt::format("<p class=\"meta\">system {} &middot; strategy {} &middot; seed {} &middot; {} time &middot; {} steps",
                     escape_markup(t.scenario.is_object() ? t.scenario.value("system", "?") : "?"), escape_markup(t.strategy), t.seed,
                     time_mode_name(t.time), t.events.empty() ? 0 : t.events.back().step + 1);
  if (t.shrunk) {
    out += fmt::format(" &middot; shrunk to {} preemptions from {} ({} steps from {})", t.shrunk->preemptions,
                       t.shrunk->original_preemptions, t.shrunk->steps, t.shrunk->original_steps);
  }
  out += "</p>\n";
  out += fmt::format("<p><span class=\"verdict {}\">{}{}{}</span></p>\n", failure ? "failure" : "pass",
                     verdict_name(t.verdict), t.invariant.empty() ? "" : " " + escape_markup(t.invariant),
                     t.message.empty() ? "" : ": " + escape_markup(t.message));
  out += fmt::format("<pre class=\"replay\">{}</pre>\n", escape_markup(replay_command));
  out += "<p class=\"legend\"><span class=\"acquire\" style=\"background:#e3f5e5\">acquire</span>"
         "<span style=\"background:#e4eefb\">release</span><span style=\"background:#fff4d6\">wait</span>"
         "<span style=\"background:#ffe0b2\">timeout</span><span style=\"background:#fde2e1\">choice / fault</span>"
         "<span style=\"background:#f3e5f5\">failed attempt</span></p>\n";
  out += "<table class=\"swimlanes\"><thead><tr><th>step</th><th>time</th>";
  for (std::size_t a = 0; a < t.actors.size(); ++a) {
    out += fmt::format("<th class=\"lane\" data-actor=\"{}\">{}</th>", a, escape_markup(t.actors[a]));
  }
  out += "</tr></thead><tbody>\n";
  for (const auto& e : t.events) {
    out += fmt::format("<tr><td class=\"step\">{}</td><td class=\"time\">{}</td>", e.step, time_text(e.time_ns));
    for (std::size_t a = 0; a < t.actors.size(); ++a) {
      if (static_cast<std::size_t>(e.actor) == a) {
        out += fmt::format("<td class=\"ev {}\">{}{}</td>", kind_of(e), escape_markup(e.op),
                           e.result.empty() ? "" : " &rarr; " + escape_markup(e.result));
      } else {
        out += "<td></td>";
      }
    }
    out += "</tr>\n";
  }
  if (failure) {
    out += fmt::format("<tr id=\"violation\"><td colspan=\"{}\">{}{}: {}</td></tr>\n", t.actors.size() + 2,
                       verdict_name(t.verdict), t.invariant.empty() ? "" : " " + escape_markup(t.invariant), escape_markup(t.message));
  }
  out += "</tbody></table>\n</body></html>\n";
  return out;
}

}  // namespace lockstep::cli
