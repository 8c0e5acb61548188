#include "lockstep/cli/html_report.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lockstep/cli/markup.h"
#include "lockstep/model/timing.h"
#include "lockstep/sim/explain/holding.h"
#include "lockstep/sim/explain/interleaving_table.h"

namespace lockstep::cli {
namespace {

using sim::LogEvent;
using sim::Span;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The kind of an event, for its colour.
std::string_view kind_of(const LogEvent& e) {
  const std::string_view op = e.op;
  if (starts_with(e.result, "timeout")) return "timeout";
  if (starts_with(op, "choose")) return "choice";
  if (starts_with(op, "observe")) return "observe";
  if (starts_with(e.result, "queued") || op.find("_wait") != std::string_view::npos || starts_with(op, "sleep")) {
    return "wait";
  }
  if (starts_with(op, "unlock") || starts_with(op, "runlock") || starts_with(op, "release") || starts_with(op, "close") ||
      starts_with(op, "flock_un") || starts_with(op, "flock_drop") || starts_with(op, "advisory_unlock") ||
      starts_with(op, "return") || starts_with(op, "commit") || starts_with(op, "rollback")) {
    return "release";
  }
  if (starts_with(op, "lock") || starts_with(op, "rlock") || starts_with(op, "acquire") || starts_with(op, "try_") ||
      starts_with(op, "flock") || starts_with(op, "advisory") || starts_with(op, "checkout") ||
      starts_with(op, "select_for_update")) {
    return e.result == "failed" || e.result == "0" ? "failed" : "acquire";
  }
  return "data";
}

std::string_view kind_colour(std::string_view kind) {
  if (kind == "acquire") return "#2e7d32";
  if (kind == "release") return "#1565c0";
  if (kind == "wait") return "#b7791f";
  if (kind == "timeout") return "#e65100";
  if (kind == "choice") return "#c62828";
  if (kind == "failed") return "#7b1fa2";
  if (kind == "observe") return "#9e9e9e";
  return "#455a64";
}

// What an object is, by its name, for the colour of its bars.
struct ObjectKind {
  std::string_view name;
  std::string_view colour;
};
ObjectKind object_kind(std::string_view name) {
  if (starts_with(name, "advisory")) return {"advisory lock", "#f59e0b"};
  if (starts_with(name, "pool")) return {"pooled connection", "#14b8a6"};
  if (name.find('#') != std::string_view::npos) return {"row lock", "#8b5cf6"};
  return {"mutex, flock, semaphore", "#3b82f6"};
}
constexpr std::string_view kObjectKinds[] = {"advisory(", "row#", "m", "pool"};

std::string time_text(std::int64_t ns) {
  if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

std::string cell(const LogEvent& e) { return e.result.empty() ? e.op : fmt::format("{} \u2192 {}", e.op, e.result); }

constexpr double kCharWidth = 7.25;  // 12px monospace
constexpr double kLineHeight = 15;
constexpr double kRowPad = 4;
constexpr double kGutter = 120;
constexpr double kSlotWidth = 9;
constexpr double kTop = 34;
constexpr double kCollapsedHeight = 22;
constexpr std::size_t kMaxChars = 64;
constexpr std::size_t kMinCollapsedRun = 6;
constexpr int kMaxSlots = 6;

struct Row {
  std::uint64_t first = 0, last = 0;  // steps
  bool collapsed = false;
  std::vector<const LogEvent*> events;
  double y = 0, h = 0;
};

struct Layout {
  std::vector<double> lane_x, lane_w;
  std::vector<int> slots;          // per actor
  std::vector<std::size_t> chars;  // per actor: text width in characters
  std::vector<int> slot_of;        // per span
  std::vector<Row> rows;
  std::map<std::uint64_t, std::size_t> row_of;  // step -> row
  double width = 0, height = 0;

  double text_x(int a) const { return lane_x[a] + 10 + slots[a] * kSlotWidth + 12; }
  double marker_x(int a) const { return text_x(a) - 7; }
  double slot_x(int a, int slot) const { return lane_x[a] + 8 + slot * kSlotWidth; }
  const Row& row(std::uint64_t step) const { return rows[row_of.at(step)]; }
  double top(std::uint64_t step) const { return row(step).y; }
  double bottom(std::uint64_t step) const { return row(step).y + row(step).h; }
  double mid(std::uint64_t step) const {
    const Row& r = row(step);
    return r.collapsed ? r.y + r.h / 2 : r.y + kRowPad + kLineHeight / 2;
  }
};

// Gives each span a slot beside its actor's lane: the lowest slot of its actor free at its
// first step (at most kMaxSlots); counts the slots of each actor.
void assign_slots(Layout& l, const std::vector<Span>& spans, std::size_t actors) {
  std::vector<std::vector<std::uint64_t>> busy_until(actors);
  for (const Span& s : spans) {
    if (static_cast<std::size_t>(s.actor) >= actors) {
      l.slot_of.push_back(0);
      continue;
    }
    auto& slots = busy_until[s.actor];
    int slot = 0;
    while (slot < static_cast<int>(slots.size()) && slots[slot] >= s.from) ++slot;
    if (slot >= kMaxSlots) slot = kMaxSlots - 1;
    if (slot >= static_cast<int>(slots.size())) slots.resize(slot + 1, 0);
    slots[slot] = std::max(slots[slot], s.to + (s.to > s.from ? 0 : 1));
    l.slot_of.push_back(slot);
    l.slots[s.actor] = std::max(l.slots[s.actor], slot + 1);
  }
}

// The width of each lane: its slots and its widest text (at most kMaxChars); the page's width.
void size_lanes(Layout& l, const sim::Trace& t) {
  const std::size_t actors = t.actors.size();
  for (std::size_t a = 0; a < actors; ++a) l.chars[a] = std::max(l.chars[a], t.actors[a].size());
  for (const LogEvent& e : t.events) {
    if (e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors) {
      l.chars[e.actor] = std::max(l.chars[e.actor], std::min(kMaxChars, cell(e).size()));
    }
  }
  double x = kGutter;
  for (std::size_t a = 0; a < actors; ++a) {
    l.lane_x.push_back(x);
    l.lane_w.push_back(10 + l.slots[a] * kSlotWidth + 12 + static_cast<double>(l.chars[a]) * kCharWidth + 18);
    x += l.lane_w.back();
  }
  l.width = std::max(x + 20, 720.0);  // room for the collapsed rows' text
}

using StepEvents = std::map<std::uint64_t, std::vector<const LogEvent*>>;

// Steps worth a row of their own when the trace is long: near the cause's steps, the ends
// of waits, choices and timeouts; the first 3 and the last 8.
std::set<std::uint64_t> kept_steps(const sim::Trace& t, const std::vector<Span>& spans, const sim::Cause* cause,
                                   const StepEvents& by_step) {
  std::set<std::uint64_t> keep;
  auto near = [&](std::uint64_t step, std::uint64_t d) {
    const std::uint64_t to = step > UINT64_MAX - d ? UINT64_MAX : step + d;
    for (std::uint64_t s = step >= d ? step - d : 0;; ++s) {
      keep.insert(s);
      if (s == to) break;
    }
  };
  if (cause != nullptr) {
    for (const auto& p : cause->pairs) near(p.first, 2), near(p.second, 2);
  }
  for (const Span& s : spans) {
    if (s.kind == Span::Kind::wait) near(s.from, 0), near(s.to, 0);
  }
  for (const LogEvent& e : t.events) {
    const auto kind = kind_of(e);
    if (kind == "choice" || kind == "timeout") near(e.step, 1);
  }
  std::size_t k = 0;
  for (const auto& [step, events] : by_step) {
    if (k < 3 || k + 8 >= by_step.size()) keep.insert(step);
    ++k;
  }
  return keep;
}

// Adds a row for step `s` at height y, as tall as its events' wrapped lines; gives its bottom.
double add_step_row(Layout& l, std::uint64_t s, const StepEvents& by_step, std::size_t actors, double y) {
  Row r;
  r.first = r.last = s;
  r.events = by_step.at(s);
  std::size_t lines = 0;
  for (const LogEvent* e : r.events) {
    const std::size_t width = e->actor >= 0 && static_cast<std::size_t>(e->actor) < actors ? l.chars[e->actor] : kMaxChars;
    lines += sim::wrap_cell(cell(*e), width).size();
  }
  r.y = y;
  r.h = static_cast<double>(std::max<std::size_t>(lines, 1)) * kLineHeight + 2 * kRowPad;
  l.row_of[s] = l.rows.size();
  l.rows.push_back(std::move(r));
  return y + l.rows.back().h;
}

// Adds the rows of a run of steps at height y: one collapsed row for a run of at least
// kMinCollapsedRun, else a row per step; gives their bottom.
double add_rows(Layout& l, const std::vector<std::uint64_t>& run, const StepEvents& by_step, std::size_t actors, double y) {
  if (run.empty()) return y;
  if (run.size() < kMinCollapsedRun) {
    for (const auto s : run) y = add_step_row(l, s, by_step, actors, y);
    return y;
  }
  Row r;
  r.first = run.front();
  r.last = run.back();
  r.collapsed = true;
  r.y = y;
  r.h = kCollapsedHeight;
  for (const auto s : run) l.row_of[s] = l.rows.size();
  l.rows.push_back(std::move(r));
  return y + kCollapsedHeight;
}

// Where everything goes: lanes, slots, and a row per step (past kCollapseAbove steps, runs
// of steps far from what matters collapsed into one row each).
Layout lay_out(const sim::Trace& t, const std::vector<Span>& spans, const sim::Cause* cause) {
  Layout l;
  const std::size_t actors = t.actors.size();
  l.slots.assign(actors, 0);
  l.chars.assign(actors, 12);
  assign_slots(l, spans, actors);
  size_lanes(l, t);
  StepEvents by_step;
  for (const LogEvent& e : t.events) by_step[e.step].push_back(&e);
  const bool collapse = by_step.size() > kCollapseAbove;
  const std::set<std::uint64_t> keep = collapse ? kept_steps(t, spans, cause, by_step) : std::set<std::uint64_t>{};
  double y = kTop;
  std::vector<std::uint64_t> run;  // steps not kept, since the last kept one
  for (const auto& [step, events] : by_step) {
    if (collapse && !keep.contains(step)) {
      run.push_back(step);
      continue;
    }
    y = add_rows(l, run, by_step, actors, y);
    run.clear();
    y = add_step_row(l, step, by_step, actors, y);
  }
  l.height = add_rows(l, run, by_step, actors, y);
  return l;
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d1d1f; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 18px 0 6px; }
.meta { color: #555; margin: 2px 0; }
pre.replay { background: #f4f4f6; padding: 8px 12px; border-radius: 6px; overflow-x: auto; }
.verdict { font-weight: 600; padding: 6px 10px; border-radius: 6px; display: inline-block; }
.verdict.failure { background: #fde2e1; color: #8a1c14; }
.verdict.pass { background: #e3f5e5; color: #1b5e20; }
ol.cause li { margin: 4px 0; }
ol.cause .steps { font-weight: 600; color: #c62828; }
.legend span { display: inline-flex; align-items: center; margin-right: 14px; font-size: 12px; color: #444; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 5px; border-radius: 2px; }
.scroll { overflow-x: auto; border: 1px solid #e2e2e6; border-radius: 6px; margin-top: 8px; }
svg text { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; fill: #1d1d1f; }
svg text.lane-name { font: 600 13px system-ui, sans-serif; }
svg text.gutter { fill: #888; }
svg text.sub { fill: #777; }
svg text.collapsed { fill: #888; font-style: italic; }
svg text.violation { fill: #fff; font-weight: 600; }
details { margin-top: 18px; }
table.swimlanes { border-collapse: collapse; margin-top: 8px; }
table.swimlanes th, table.swimlanes td { border: 1px solid #e2e2e6; padding: 3px 8px; vertical-align: top; }
th.lane { background: #f0f0f4; min-width: 180px; }
td.step, td.time { color: #777; text-align: right; font-variant-numeric: tabular-nums; }
td.ev { font-family: ui-monospace, monospace; font-size: 13px; }
td.acquire { background: #e3f5e5; } td.release { background: #e4eefb; } td.wait { background: #fff4d6; }
td.timeout { background: #ffe0b2; font-weight: 600; } td.failed { background: #f3e5f5; }
td.choice { background: #fde2e1; font-weight: 600; } td.observe { background: #f4f4f6; color: #555; }
tr.violation td { background: #8a1c14; color: white; font-weight: 600; }
)";

// The <svg> element's start and its definitions: the hatching of waits, the arrowheads.
std::string svg_start(const Layout& l, double footer) {
  std::string s = fmt::format("<svg id=\"lanes\" width=\"{:.0f}\" height=\"{:.0f}\" "
                              "viewBox=\"0 0 {:.0f} {:.0f}\">\n",
                              l.width, l.height + footer + 10, l.width, l.height + footer + 10);
  s += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
       "<rect width=\"6\" height=\"6\" fill=\"#fff4d6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b7791f\" "
       "stroke-width=\"2.5\"/></pattern>"
       "<marker id=\"arrow-wait\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
       "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#b7791f\"/></marker>"
       "<marker id=\"arrow-cause\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
       "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c62828\"/></marker></defs>\n";
  return s;
}

// Lane backgrounds and names, the gutter's heading and the line under them.
std::string svg_lane_heads(const sim::Trace& t, const Layout& l) {
  std::string s;
  for (std::size_t a = 0; a < t.actors.size(); ++a) {
    s += fmt::format("<rect class=\"lane-bg\" x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n",
                     l.lane_x[a], l.lane_w[a], l.height, a % 2 == 0 ? "#fafafc" : "#ffffff");
    s += fmt::format("<text class=\"lane-name\" data-actor=\"{}\" x=\"{:.1f}\" y=\"21\">{}</text>\n", a, l.lane_x[a] + 8,
                     escape_markup(t.actors[a]));
  }
  s += fmt::format("<text class=\"gutter\" x=\"8\" y=\"21\">step{}</text>\n",
                   t.run.time == TimeMode::timed ? "  virtual time" : "  time");
  s += fmt::format("<line x1=\"0\" y1=\"{0}\" x2=\"{1:.0f}\" y2=\"{0}\" stroke=\"#d0d0d8\"/>\n", kTop - 1, l.width);
  return s;
}

// A collapsed row: how many steps it stands for, and their range in the gutter.
std::string svg_collapsed_row(const Row& r) {
  std::string s = fmt::format("<text class=\"collapsed\" x=\"{:.1f}\" y=\"{:.1f}\">\u22ef {} steps away from the cause, waits and "
                              "faults (every event is in the table below)</text>\n",
                              kGutter + 8, r.y + r.h / 2 + 4, r.last - r.first + 1);
  s += fmt::format("<text class=\"gutter\" x=\"8\" y=\"{:.1f}\">{}\u2013{}</text>\n", r.y + r.h / 2 + 4, r.first, r.last);
  return s;
}

// One event of a row at height y: its marker (but for an observation) and its wrapped
// text; moves y past its lines.
std::string svg_event(const Layout& l, const LogEvent& e, double& y) {
  std::string s;
  const std::string_view kind = kind_of(e);
  const bool sub = starts_with(e.op, "observe ") || starts_with(e.op, "choose ");
  if (!sub || kind == "choice") {
    const double mx = l.marker_x(e.actor), my = y - 4;
    if (kind == "choice") {
      s += fmt::format("<path class=\"choice\" d=\"M{0:.1f},{1:.1f} l5,5 l-5,5 l-5,-5 z\" fill=\"#c62828\"/>\n", mx, my - 5);
    } else {
      s += fmt::format("<circle class=\"ev {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", kind, mx, my,
                       kind_colour(kind));
    }
  }
  for (const std::string& line : sim::wrap_cell(cell(e), l.chars[e.actor])) {
    s += fmt::format("<text{} x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", sub && kind != "choice" ? " class=\"sub\"" : "",
                     l.text_x(e.actor), y, escape_markup(line));
    y += kLineHeight;
  }
  return s;
}

// The steps of the cause, each with the numbers of its pairs.
using CauseSteps = std::map<std::uint64_t, std::vector<std::size_t>>;

// One row of a step: its number and time in the gutter, the highlight of a cause's step,
// and its events.
std::string svg_step_row(const sim::Trace& t, const Layout& l, const Row& r, const CauseSteps& cause_steps) {
  const std::size_t actors = t.actors.size();
  const LogEvent* op = r.events.front();  // the step's operation, not a choice or observation logged with it
  for (const LogEvent* e : r.events) {
    if (!starts_with(e->op, "choose ") && !starts_with(e->op, "observe ")) {
      op = e;
      break;
    }
  }
  const LogEvent& head = *op;
  std::string s = fmt::format("<text class=\"gutter\" x=\"8\" y=\"{:.1f}\">{:>4}  {}</text>\n", r.y + kRowPad + 11, head.step,
                              escape_markup(time_text(head.time_ns)));
  if (cause_steps.contains(head.step) && head.actor >= 0 && static_cast<std::size_t>(head.actor) < actors) {
    s += fmt::format("<rect class=\"cause-step\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                     "fill=\"#fde2e1\" rx=\"3\"/>\n",
                     l.text_x(head.actor) - 14, r.y + 1, l.lane_x[head.actor] + l.lane_w[head.actor] - l.text_x(head.actor) + 8,
                     r.h - 2);
  }
  double y = r.y + kRowPad + 11;
  for (const LogEvent* e : r.events) {
    if (e->actor < 0 || static_cast<std::size_t>(e->actor) >= actors) continue;
    s += svg_event(l, *e, y);
  }
  return s;
}

// Every row: its separating line, then a collapsed row or a step's row.
std::string svg_rows(const sim::Trace& t, const Layout& l, const sim::Cause* cause) {
  CauseSteps cause_steps;
  if (cause != nullptr) {
    for (std::size_t k = 0; k < cause->pairs.size(); ++k) {
      cause_steps[cause->pairs[k].first].push_back(k);
      cause_steps[cause->pairs[k].second].push_back(k);
    }
  }
  std::string s;
  for (const Row& r : l.rows) {
    s += fmt::format("<line x1=\"0\" y1=\"{0:.1f}\" x2=\"{1:.0f}\" y2=\"{0:.1f}\" stroke=\"#eeeef2\"/>\n", r.y + r.h, l.width);
    if (r.collapsed) {
      s += svg_collapsed_row(r);
    } else if (!r.events.empty()) {
      s += svg_step_row(t, l, r, cause_steps);
    }
  }
  return s;
}

// What the spans are drawn with: the trace, the layout and the objects' names.
struct SpanPainter {
  const sim::Trace& t;
  const Layout& l;
  const std::vector<Span>& spans;
  const sim::ExecutionFacts* facts;

  std::string name_of(sim::ObjectId obj) const {
    return facts != nullptr && obj < facts->object_names.size() ? facts->object_names[obj] : fmt::format("object {}", obj);
  }
};

// A hold: a bar beside the holder's lane, in its object kind's colour.
std::string svg_hold(const SpanPainter& p, const Span& sp, double x, double y0, double y1) {
  const std::string object = p.name_of(sp.object);
  return fmt::format("<rect class=\"hold\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"2\" fill=\"{}\">"
                     "<title>{} holds {} from step {} to step {}{}</title></rect>\n",
                     x, y0, kSlotWidth - 2, std::max(y1 - y0, 4.0), object_kind(object).colour,
                     escape_markup(p.t.actors[sp.actor]), escape_markup(object), sp.from, sp.to,
                     sp.open_at_end ? " (still held at the end)" : "");
}

// A wait's arrows: to each holder's bar for its object at the wait's first step.
std::string svg_wait_arrows(const SpanPainter& p, const Span& sp, double x) {
  const std::size_t actors = p.t.actors.size();
  std::string s;
  for (const auto h : sp.holders) {
    for (std::size_t m = 0; m < p.spans.size(); ++m) {
      const Span& held = p.spans[m];
      if (held.kind != Span::Kind::hold || held.actor != h || held.object != sp.object || held.from > sp.from ||
          held.to < sp.from || static_cast<std::size_t>(h) >= actors) {
        continue;
      }
      const double hx = p.l.slot_x(h, p.l.slot_of[m]) + (kSlotWidth - 2) / 2;
      const double wx = x + (kSlotWidth - 2) / 2;
      const double y = p.l.mid(sp.from);
      s += fmt::format("<line class=\"wait-arrow\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#b7791f\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"4 3\" marker-end=\"url(#arrow-wait)\"><title>{} waits for {}, "
                       "held by {}</title></line>\n",
                       wx + (hx > wx ? 4 : -4), y, hx + (hx > wx ? -4 : 4), y, escape_markup(p.t.actors[sp.actor]),
                       escape_markup(p.name_of(sp.object)), escape_markup(p.t.actors[h]));
    }
  }
  return s;
}

// A wait: a hatched bar beside the waiter's lane, naming whom it waits behind and how it ended.
std::string svg_wait(const SpanPainter& p, const Span& sp, double x, double y0, double y1) {
  const std::size_t actors = p.t.actors.size();
  std::string holders;
  for (const auto h : sp.holders) {
    holders += fmt::format("{}{}", holders.empty() ? " behind " : ", ", static_cast<std::size_t>(h) < actors ? p.t.actors[h] : "?");
  }
  return fmt::format("<rect class=\"wait\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"url(#hatch)\" "
                     "stroke=\"#b7791f\" stroke-width=\"0.8\"><title>{} waits for {}{} from step {} to step {}: {}</title></rect>\n",
                     x, y0, kSlotWidth - 2, std::max(y1 - y0, 4.0), escape_markup(p.t.actors[sp.actor]),
                     escape_markup(p.name_of(sp.object)), escape_markup(holders), sp.from, sp.to, escape_markup(sp.ended));
}

// Holds and waits beside the lanes; waits point at the holders.
std::string svg_spans(const SpanPainter& p) {
  std::string s;
  for (std::size_t k = 0; k < p.spans.size(); ++k) {
    const Span& sp = p.spans[k];
    if (static_cast<std::size_t>(sp.actor) >= p.t.actors.size() || !p.l.row_of.contains(sp.from) || !p.l.row_of.contains(sp.to)) {
      continue;
    }
    const double x = p.l.slot_x(sp.actor, p.l.slot_of[k]);
    const double y0 = p.l.top(sp.from) + 2, y1 = p.l.bottom(sp.to) - 2;
    if (sp.kind == Span::Kind::hold) {
      s += svg_hold(p, sp, x, y0, y1);
    } else {
      s += svg_wait(p, sp, x, y0, y1);
      s += svg_wait_arrows(p, sp, x);
    }
  }
  return s;
}

// Cause pair k: a numbered arrow from the step that ran first to the step it ran before.
std::string svg_cause_arrow(const sim::Trace& t, const Layout& l, const sim::CausePair& p, std::size_t k) {
  const LogEvent* a = nullptr;
  const LogEvent* b = nullptr;
  for (const LogEvent& e : t.events) {  // a step's operation, not a choice or observation logged with it
    if (starts_with(e.op, "choose ") || starts_with(e.op, "observe ")) continue;
    if (a == nullptr && e.step == p.first) a = &e;
    if (b == nullptr && e.step == p.second) b = &e;
  }
  const std::size_t actors = t.actors.size();
  if (a == nullptr || b == nullptr || static_cast<std::size_t>(a->actor) >= actors || static_cast<std::size_t>(b->actor) >= actors) {
    return "";
  }
  const double x1 = l.marker_x(a->actor), y1 = l.mid(p.first);
  const double x2 = l.marker_x(b->actor), y2 = l.mid(p.second);
  const double bend = std::max(40.0, std::abs(x2 - x1) / 3);
  const double dir = x2 >= x1 ? 1 : -1;
  // It leaves the first marker towards the second and always arrives from the left,
  // clear of the second step's text.
  const double c1x = x1 + dir * bend, c2x = x2 - bend, ex = x2 - 6;
  std::string s = fmt::format("<path class=\"cause-arrow\" data-pair=\"{}\" d=\"M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" "
                              "fill=\"none\" stroke=\"#c62828\" stroke-width=\"2.2\" opacity=\"0.85\" marker-end=\"url(#arrow-cause)\">"
                              "<title>cause {}: {}</title></path>\n",
                              k + 1, x1, y1, c1x, y1 + 4, c2x, y2, ex, y2, k + 1, escape_markup(p.sentence));
  // The pair's number at the middle of the curve.
  const double cx = (x1 + 3 * c1x + 3 * c2x + ex) / 8;
  const double cy = (y1 + 3 * (y1 + 4) + 3 * y2 + y2) / 8;
  s += fmt::format("<circle cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"8\" fill=\"#c62828\"/><text x=\"{0:.1f}\" y=\"{2:.1f}\" "
                   "text-anchor=\"middle\" style=\"fill:#fff;font:600 11px system-ui\">{3}</text>\n",
                   cx, cy, cy + 4, k + 1);
  return s;
}

// The lanes as one SVG: lane heads, rows, spans, the cause's arrows and the violation.
std::string svg_lanes(const sim::Trace& t, const std::vector<Span>& spans, const sim::ExecutionFacts* facts,
                      const sim::Cause* cause, bool failure) {
  const Layout l = lay_out(t, spans, cause);
  std::string s = svg_start(l, failure ? 30 : 0);
  s += svg_lane_heads(t, l);
  s += svg_rows(t, l, cause);
  s += svg_spans(SpanPainter{t, l, spans, facts});
  if (cause != nullptr) {
    for (std::size_t k = 0; k < cause->pairs.size(); ++k) {
      const auto& p = cause->pairs[k];
      if (l.row_of.contains(p.first) && l.row_of.contains(p.second)) s += svg_cause_arrow(t, l, p, k);
    }
  }
  if (failure) {
    s += fmt::format("<g id=\"violation\"><rect x=\"0\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"26\" fill=\"#8a1c14\"/>"
                     "<text class=\"violation\" x=\"8\" y=\"{:.1f}\">{}{}: {}</text></g>\n",
                     l.height + 4, l.width, l.height + 21, verdict_name(t.verdict),
                     t.invariant.empty() ? "" : " " + escape_markup(t.invariant), escape_markup(t.message));
  }
  s += "</svg>\n";
  return s;
}

std::string raw_table(const sim::Trace& t, bool failure) {
  std::string out = fmt::format("<details><summary>Every event ({}), as a table</summary>\n", t.events.size());
  out += "<table class=\"swimlanes\"><thead><tr><th>step</th><th>time</th>";
  for (std::size_t a = 0; a < t.actors.size(); ++a) {
    out += fmt::format("<th class=\"lane\" data-actor=\"{}\">{}</th>", a, escape_markup(t.actors[a]));
  }
  out += "</tr></thead><tbody>\n";
  // One row per step and actor: an observation or a choice logged with its step joins the
  // step's cell (a bare "observe" step is shown by its observation).
  for (std::size_t i = 0; i < t.events.size();) {
    const auto& e = t.events[i];
    std::size_t j = i + 1;
    while (j < t.events.size() && t.events[j].step == e.step && t.events[j].actor == e.actor) ++j;
    std::string text;
    for (std::size_t k = i; k < j; ++k) {
      const auto& x = t.events[k];
      if (x.op == "observe" && x.result.empty() && j - i > 1) continue;
      text += fmt::format("{}<span class=\"ev {}\">{}{}</span>", text.empty() ? "" : "<br>", kind_of(x), escape_markup(x.op),
                          x.result.empty() ? "" : " &rarr; " + escape_markup(x.result));
    }
    out += fmt::format("<tr><td class=\"step\">{}</td><td class=\"time\">{}</td>", e.step, time_text(e.time_ns));
    for (std::size_t a = 0; a < t.actors.size(); ++a) {
      out += static_cast<std::size_t>(e.actor) == a ? fmt::format("<td class=\"ev {}\">{}</td>", kind_of(e), text) : "<td></td>";
    }
    out += "</tr>\n";
    i = j;
  }
  if (failure) {
    out += fmt::format("<tr class=\"violation\"><td colspan=\"{}\">{}{}: {}</td></tr>\n", t.actors.size() + 2,
                       verdict_name(t.verdict), t.invariant.empty() ? "" : " " + escape_markup(t.invariant),
                       escape_markup(t.message));
  }
  out += "</tbody></table></details>\n";
  return out;
}

// "Why it failed": the cause's pairs as numbered sentences, or why there are none.
std::string cause_section(const sim::Cause& cause) {
  std::string out = "<h2>Why it failed</h2>\n";
  if (!cause.computed) {
    out += fmt::format("<p class=\"meta\">Cause not computed: {}</p>\n", escape_markup(cause.reason));
  } else if (cause.pairs.empty()) {
    out += fmt::format("<p class=\"meta\">None of the {} reorderings of two steps tried avoids this failure.</p>\n",
                       cause.tried);
  } else {
    out += fmt::format("<p class=\"meta\">The failure depends on {} ordering{} ({} reorderings tried{}); each is an "
                       "arrow below, from the step that ran first to the step it ran before:</p>\n<ol class=\"cause\">\n",
                       cause.found, cause.found == 1 ? "" : "s", cause.tried,
                       cause.found > cause.pairs.size() ? fmt::format(", the {} latest shown", cause.pairs.size()) : "");
    for (std::size_t k = 0; k < cause.pairs.size(); ++k) {
      const auto& p = cause.pairs[k];
      out += fmt::format("<li id=\"cause-{}\"><span class=\"steps\">steps {} &rarr; {}</span>: {}</li>\n", k + 1, p.first,
                         p.second, escape_markup(p.sentence));
    }
    out += "</ol>\n";
    if (!cause.complete) out += fmt::format("<p class=\"meta\">Incomplete: {}.</p>\n", escape_markup(cause.reason));
  }
  if (cause.computed && !cause.timing.empty()) {
    out += "<p class=\"meta\">It depends on timing: with one timing choice changed, the execution goes otherwise:</p>\n<ul>\n";
    for (const std::string& t : cause.timing) out += fmt::format("<li>{}</li>\n", escape_markup(t));
    out += "</ul>\n";
  }
  return out;
}

// The legend: object kinds of the bars, then the marks.
std::string legend() {
  std::string out = "<p class=\"legend\">";
  for (const auto example : kObjectKinds) {
    const ObjectKind k = object_kind(example);
    out += fmt::format("<span><i style=\"background:{}\"></i>held: {}</span>", k.colour, k.name);
  }
  out += "<span><i style=\"background:repeating-linear-gradient(45deg,#fff4d6 0 3px,#b7791f 3px 5px)\"></i>waiting "
         "(dashed arrow: for whom)</span><span><i style=\"background:#c62828;border-radius:6px\"></i>cause (numbered "
         "arrow)</span><span><i style=\"background:#c62828;transform:rotate(45deg) scale(.7)\"></i>choice or fault</span></p>\n";
  return out;
}

}  // namespace

std::string html_report(const sim::Trace& t, const std::string& replay_command, const sim::ExecutionFacts* facts) {
  const std::string name = t.scenario.is_object() ? t.scenario.value("name", "trace") : "trace";
  const std::string description = t.scenario.is_object() ? t.scenario.value("description", "") : "";
  const bool failure = is_failure(t.verdict);
  const sim::Cause* cause = t.cause && t.cause->computed ? &*t.cause : nullptr;
  const std::vector<Span> spans = facts != nullptr ? sim::holding_spans(*facts) : std::vector<Span>{};
  std::string out;
  out += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>lockstep: {}</title><style>{}</style></head><body>\n", escape_markup(name), kStyle);
  out += fmt::format("<h1>{}</h1>\n", escape_markup(name));
  if (!description.empty()) out += fmt::format("<p class=\"meta\">{}</p>\n", escape_markup(description));
  out += fmt::format("<p class=\"meta\">system {} &middot; strategy {} &middot; seed {} &middot; {} time &middot; {} steps",
                     escape_markup(t.scenario.is_object() ? t.scenario.value("system", "?") : "?"), escape_markup(t.strategy), t.run.seed,
                     time_mode_name(t.run.time), t.events.empty() ? 0 : t.events.back().step + 1);
  if (t.shrunk) {
    out += fmt::format(" &middot; shrunk to {} preemptions from {} ({} steps from {})", t.shrunk->preemptions,
                       t.shrunk->original_preemptions, t.shrunk->steps, t.shrunk->original_steps);
  }
  out += "</p>\n";
  if (t.run.time == TimeMode::timed) out += fmt::format("<p class=\"meta\">timing: {}</p>\n", escape_markup(timing_coverage(t.run.timing)));
  out += fmt::format("<p><span class=\"verdict {}\">{}{}{}</span></p>\n", failure ? "failure" : "pass",
                     verdict_name(t.verdict), t.invariant.empty() ? "" : " " + escape_markup(t.invariant),
                     t.message.empty() ? "" : ": " + escape_markup(t.message));
  if (t.cause) out += cause_section(*t.cause);
  out += fmt::format("<pre class=\"replay\">{}</pre>\n", escape_markup(replay_command));
  out += legend();
  if (facts == nullptr) {
    out += "<p class=\"meta\">Drawn from the trace's events alone (a model in C++ replays in its own test program): "
           "no holding spans.</p>\n";
  }
  out += "<div class=\"scroll\">\n" + svg_lanes(t, spans, facts, cause, failure) + "</div>\n";
  out += raw_table(t, failure);
  out += "</body></html>\n";
  return out;
}

}  // namespace lockstep::cli
