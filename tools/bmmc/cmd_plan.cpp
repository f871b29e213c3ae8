// `bmmc plan SPEC` — print the kernel plan, optionally proved by the plan checker (--check); with --ranks G the
// distributed plan of docs/DESIGN.md §9 (k, groups, chunks, pre/post-pass, per-rank schedules), with --nodes N too
// the plan across nodes of §9.1b (bytes over the network per rank against the bound); with --in-place
// the in-place plan of §8 (the involution passes, each a tile pass with its partner map). With --shape S, SPEC is
// an any-shape map: one that is a BMMC is planned as above (and says so), any other by the digit planner
// (plan/digit_plan.hpp), its plan proved by the digit plan checker where it is small enough.
#include <fmt/format.h>

#include <algorithm>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/node_plan.hpp"
#include "bmmc/dist/push_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/plan/gpu_policy.hpp"
#include "bmmc/plan/digit_plan.hpp"
#include "bmmc/plan/digit_plan_check.hpp"
#include "bmmc/plan/inplace_plan.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/permute.hpp"
#include "cli_common.hpp"
#include "plan_options.hpp"

namespace bmmc::cli {
namespace {

nlohmann::ordered_json pass_json(const Pass& pass) {
  nlohmann::ordered_json j;
  if (const auto* p = std::get_if<NaivePass>(&pass)) {
    j["kind"] = "naive";
    j["bmmc"] = bmmc_json(p->bmmc);
    j["blocks"] = p->blocks();
    j["threads"] = p->threads_per_block;
    j["shared_bytes"] = 0;
    return j;
  }
  const auto& t = std::get<TilePass>(pass);
  j["kind"] = "tile";
  j["bmmc"] = bmmc_json(t.bmmc);
  j["vector_bits"] = t.vector_bits;
  j["segment_bits"] = t.segment_bits();
  j["q"] = t.q;
  j["rows"] = t.row_bits;
  j["read_run_bits"] = read_run_bits(t);
  j["write_run_bits"] = write_run_bits(t);
  j["v_basis"] = t.read_rows;
  j["write_rows"] = t.write_rows;
  j["block_bits"] = t.block_positions;
  j["block_order"] = t.block_order;
  j["swizzle"] = t.swizzle;
  j["packed_bytes"] = t.packed_bytes;
  j["blocks"] = t.blocks();
  j["threads"] = t.threads_per_block();
  j["elems_per_thread"] = t.elems_per_thread();
  j["shared_bytes"] = t.shared_bytes();
  return j;
}

nlohmann::ordered_json inplace_pass_json(const InPlacePass& pass) {
  nlohmann::ordered_json j;
  if (const auto* p = std::get_if<NaiveInvolutionPass>(&pass)) {
    j["kind"] = p->vector_bits > 0 ? "direct-involution" : "naive-involution";
    j["bmmc"] = bmmc_json(p->bmmc);
    j["vector_bits"] = p->vector_bits;
    j["blocks"] = p->blocks();
    j["threads"] = p->threads_per_block;
    j["shared_bytes"] = 0;
    return j;
  }
  const auto& t = std::get<InvolutionPass>(pass);
  j = pass_json(Pass{t.tile});
  j["kind"] = "involution-tile";
  j["shared_bytes"] = t.shared_bytes();
  j["partner_base"] = t.partner_base;
  j["partner_cols"] = t.partner_cols;
  j["tile_fixed"] = t.tile_fixed;
  if (t.mask_bits) j["mask"] = {{"bits", t.mask_bits}, {"value", t.mask_value}};
  return j;
}

// --json: `head` (what --shape adds: how the map runs) first, then the plan's own keys.
void print_json_after(const nlohmann::ordered_json& head, const nlohmann::ordered_json& j) {
  nlohmann::ordered_json all = head.is_object() ? head : nlohmann::ordered_json::object();
  for (const auto& [key, value] : j.items()) all[key] = value;
  print_json(all);
}

void print_inplace_plan(const Bmmc& b, const PlanCliOptions& po, bool json, bool check,
                        const nlohmann::ordered_json& head) {
  const InPlacePlan plan = make_inplace_plan(b, po.elem_bytes, gpu_plan_options(to_gpu_policy(po), b.n(), default_caps()));
  std::optional<CheckReport> report;
  if (check) {
    if (plan.n() > 26) throw UsageError(fmt::format("--check executes every element; n = {} is too large (at most 26)", plan.n()));
    report = check_inplace_plan(plan);
  }
  if (json) {
    nlohmann::ordered_json j;
    j["n"] = plan.n();
    j["elem_bytes"] = plan.elem_bytes;
    j["involution"] = plan.involution();
    j["route"] = plan.route;
    j["passes"] = nlohmann::ordered_json::array();
    for (const InPlacePass& p : plan.passes) j["passes"].push_back(inplace_pass_json(p));
    if (report) {
      j["correct"] = report->correct;
      j["coalesced"] = report->coalesced;
      j["max_bank_conflict"] = report->max_bank_conflict;
      if (!report->correct) j["error"] = report->first_error;
    }
    return print_json_after(head, j);
  }
  fmt::print("{}", describe(plan));
  if (report)
    fmt::print("check: correct and race-free {}, coalesced {}, max_bank_conflict {}{}\n", report->correct ? "yes" : "NO",
               report->coalesced ? "yes" : "no", report->max_bank_conflict,
               report->correct ? "" : " (" + report->first_error + ")");
}

// Schedules are printed for rank 0, and for every rank when there are at most this many.
constexpr std::uint64_t kAllSchedulesUpTo = 16;

std::string hex(BitVec v) { return fmt::format("{:#x}", v); }

nlohmann::ordered_json dist_plan_json(const DistPlan& p) {
  const DistTraffic t = dist_traffic(p);
  nlohmann::ordered_json j;
  j["n"] = p.n();
  j["ranks"] = p.ranks();
  j["rank_bits"] = p.rank_bits;
  j["local_bits"] = p.local_bits;
  j["elem_bytes"] = p.elem_bytes;
  j["k"] = p.k;
  j["destinations_per_rank"] = p.destinations_per_rank();
  j["groups"] = p.groups();
  j["rounds"] = p.rounds();
  j["elements_per_chunk"] = p.chunk_elems();
  j["bytes_per_chunk"] = p.chunk_bytes();
  j["bytes_per_rank"] = p.local_elems() * static_cast<std::uint64_t>(p.elem_bytes);
  j["remote_bytes_per_rank"] = {{"min", t.min_remote_bytes}, {"max", t.max_remote_bytes}};
  j["remote_bytes_total"] = t.total_remote_bytes;
  j["ranks_keeping_a_chunk"] = t.ranks_keeping_a_chunk;
  j["plan_hash"] = fmt::format("{:#018x}", dist_plan_hash(p));
  j["bmmc"] = bmmc_json(p.bmmc);
  j["chunk_rows"] = p.chunk_rows;
  j["dest_chunk_cols"] = p.dest_chunk_cols;
  j["spread_rows"] = p.spread_rows;
  j["piece_bits"] = p.piece_bits;  // the top piece_bits spread rows are the piece rows φ
  j["pre"] = bmmc_json(p.pre);
  j["dest_rank_cols"] = p.dest_rank_cols;
  j["dest_complement"] = p.dest_complement;
  j["sender_basis"] = p.sender_basis;
  j["sender_rep_cols"] = p.sender_rep_cols;
  j["sender_rep_complement"] = p.sender_rep_complement;
  j["round_cols"] = p.round_cols;
  j["post"] = bmmc_json(p.post);
  j["post_rank_cols"] = p.post_rank_cols;
  j["fused_line_bits"] = p.fused_line_bits;
  // The pipelined exchange as the engines run it by default (pieces = 0: the fewest within 1/8 scratch).
  const PieceSchedule ps = make_piece_schedule(p, 0);
  const std::uint64_t scratch = ps.scratch_elems * static_cast<std::uint64_t>(p.elem_bytes);
  j["pipeline"] = {{"pieces", ps.pieces},
                   {"atoms_per_chunk", std::uint64_t{1} << ps.atom_bits},
                   {"max_piece_elements", ps.max_piece_elems},
                   {"depth", ps.depth},
                   {"send_segments", ps.send_segments},
                   {"scratch_bytes_per_rank", scratch},
                   {"scratch_fraction", static_cast<double>(ps.scratch_elems) / static_cast<double>(p.local_elems())}};
  const PushPlan push = make_gpu_push_plan(p.bmmc, p.rank_bits, p.elem_bytes);
  j["push"] = {{"line_bits", push.line_bits}, {"one_pass", push.one_pass()}, {"push", bmmc_json(push.push)},
               {"finish", bmmc_json(push.finish)}};
  j["schedules"] = nlohmann::ordered_json::array();
  for (BitVec r = 0; r < (p.ranks() <= kAllSchedulesUpTo ? p.ranks() : 1); ++r) {
    nlohmann::ordered_json s;
    s["rank"] = r;
    s["slot"] = sender_slot(p, r);
    s["send_group"] = send_group(p, r);
    s["recv_group"] = recv_group(p, r);
    s["post_complement"] = post_for_rank(p, r).complement();
    s["send"] = nlohmann::ordered_json::array();
    for (const SendStep& st : send_schedule(p, r))
      s["send"].push_back({{"round", st.round}, {"dest", st.dest}, {"chunk", st.chunk}, {"slot", st.slot},
                           {"offset", st.offset}, {"count", st.count}});
    s["recv"] = nlohmann::ordered_json::array();
    for (const RecvStep& st : recv_schedule(p, r))
      s["recv"].push_back({{"round", st.round}, {"source", st.source}, {"source_chunk", st.source_chunk},
                           {"slot", st.slot}, {"offset", st.offset}, {"count", st.count}});
    j["schedules"].push_back(s);
  }
  return j;
}

void print_dist_plan(const Bmmc& b, std::uint64_t ranks, int elem_bytes, bool json,
                     const nlohmann::ordered_json& head) {
  const DistPlan p = make_dist_plan(b, dist_rank_bits(ranks, b.n()), elem_bytes);
  if (json) return print_json_after(head, dist_plan_json(p));
  fmt::print("{}", describe(p));
  const DistTraffic t = dist_traffic(p);
  fmt::print(" traffic: {} bytes per rank, {}..{} of them to other ranks; {} ranks keep one chunk\n",
             p.local_elems() * static_cast<std::uint64_t>(p.elem_bytes), t.min_remote_bytes, t.max_remote_bytes,
             t.ranks_keeping_a_chunk);
  const PieceSchedule ps = make_piece_schedule(p, 0);
  fmt::print(" pipelined exchange (the engines' default where its pieces can be cut along tiles): {} pieces of at most "
             "{} of the {} atoms of a chunk; scratch {} bytes per rank ({:.3f} of its array): {} send buffers of {} "
             "segments, {} receive buffers of {} slots\n",
             ps.pieces, ps.max_piece_elems / std::max<std::uint64_t>(ps.atom_elems, 1), std::uint64_t{1} << ps.atom_bits,
             ps.scratch_elems * static_cast<std::uint64_t>(p.elem_bytes),
             static_cast<double>(ps.scratch_elems) / static_cast<double>(p.local_elems()), ps.depth, ps.send_segments,
             ps.depth, p.destinations_per_rank());
  for (BitVec r = 0; r < (p.ranks() <= kAllSchedulesUpTo ? p.ranks() : 1); ++r) fmt::print("{}", describe_schedule(p, r));
  fmt::print("{}", describe(make_gpu_push_plan(b, p.rank_bits, elem_bytes)));
}

// --nodes: the plan across nodes, with the bytes over the network per rank against the bound (§9.1b).
nlohmann::ordered_json min_max(const std::vector<std::uint64_t>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {{"min", *lo}, {"max", *hi}};
}

nlohmann::ordered_json node_plan_json(const NodePlan& p) {
  const NodeTraffic t = node_traffic(p);
  nlohmann::ordered_json j;
  j["n"] = p.n();
  j["ranks"] = p.ranks();
  j["nodes"] = p.node_count();
  j["ranks_per_node"] = p.ranks_per_node();
  j["rank_bits"] = p.rank_bits;
  j["node_bits"] = p.node_bits;
  j["local_bits"] = p.local_bits;
  j["elem_bytes"] = p.elem_bytes;
  j["bytes_per_rank"] = p.local_elems() * static_cast<std::uint64_t>(p.elem_bytes);
  j["node_k"] = p.node_k();
  j["destination_nodes_per_node"] = p.nodes.destinations_per_rank();
  j["nodes_keeping_a_chunk"] = t.nodes_keeping_a_chunk;
  std::uint64_t total = 0, bound_total = 0;
  bool within = true;
  for (std::size_t r = 0; r < t.bytes.size(); ++r) {
    total += t.bytes[r];
    within = within && t.bytes[r] <= t.bound_bytes[r];
  }
  for (BitVec v = 0; v < p.node_count(); ++v)
    bound_total += network_bound(p.bmmc, p.rank_bits, p.node_bits, p.elem_bytes, v * p.ranks_per_node()).node_elems *
                   static_cast<std::uint64_t>(p.elem_bytes);
  j["network"] = {{"bytes_per_rank", min_max(t.bytes)},
                  {"bound_bytes_per_rank", min_max(t.bound_bytes)},
                  {"within_bound", within},
                  {"bytes_total", total},
                  {"bound_bytes_total", bound_total},
                  {"one_exchange_bytes_per_rank", min_max(t.one_exchange_bytes)}};
  j["bmmc"] = bmmc_json(p.bmmc);
  j["rail_bits"] = p.rail_bits;
  j["rail"] = bmmc_json(p.rail);
  j["intra_pre"] = {{"k", p.intra_pre.k}, {"bmmc", bmmc_json(p.intra_pre.bmmc)},
                    {"remote_bytes_per_node", t.intra_pre_remote_bytes}};
  const DistPlan post = intra_post_for_node(p, 0);
  j["intra_post_node_0"] = {{"k", post.k}, {"bmmc", bmmc_json(post.bmmc)}};
  j["inter_node_sends"] = nlohmann::ordered_json::array();
  for (BitVec r = 0; r < (p.ranks() <= kAllSchedulesUpTo ? p.ranks() : 1); ++r) {
    nlohmann::ordered_json s;
    s["rank"] = r;
    s["send"] = nlohmann::ordered_json::array();
    for (const NodeSend& m : inter_node_sends(p, r))
      s["send"].push_back({{"dest_rank", m.dest_rank}, {"chunk", m.chunk}, {"offset", m.offset},
                           {"dest_offset", m.dest_offset}, {"count", m.count}, {"network", m.crosses}});
    j["inter_node_sends"].push_back(s);
  }
  return j;
}

void print_node_plan(const Bmmc& b, std::uint64_t ranks, std::uint64_t nodes, int elem_bytes, bool json,
                     const nlohmann::ordered_json& head) {
  const int g = dist_rank_bits(ranks, b.n());
  const NodePlan p = make_node_plan(b, g, dist_node_bits(nodes, ranks), elem_bytes);
  if (json) return print_json_after(head, node_plan_json(p));
  fmt::print("{}", describe(p));
}

struct PlanCommand {
  SpecOptions spec;
  std::string shape;
  PlanCliOptions po;
  bool json = false, check = false, in_place = false;
  std::uint64_t ranks = 0, nodes = 0;
};

// The plan of a Bmmc, as every option asks. `head`: the keys --shape puts first in --json.
void plan_bmmc(const Bmmc& b, const PlanCommand& c, const nlohmann::ordered_json& head = {}) {
  const PlanCliOptions& po = c.po;
  if (po.longer_runs != "read" && (c.in_place || c.ranks != 0))
    throw UsageError("--longer-runs applies to out-of-place kernel plans, not to --in-place or --ranks");
  if (c.nodes != 0 && c.ranks == 0) throw UsageError("--nodes N splits the ranks of --ranks G over nodes: give --ranks too");
  if (c.in_place) {
    if (c.ranks != 0) throw UsageError("--in-place and --ranks do not combine (yet): pick one");
    return print_inplace_plan(b, po, c.json, c.check, head);
  }
  if (c.ranks != 0) {
    if (c.check) throw UsageError("--check proves kernel plans; it does not apply to --ranks");
    if (c.nodes != 0) return print_node_plan(b, c.ranks, c.nodes, po.elem_bytes, c.json, head);
    return print_dist_plan(b, c.ranks, po.elem_bytes, c.json, head);
  }
  const Plan plan = make_plan(b, po.elem_bytes, default_caps(), to_gpu_policy(po));
  std::optional<CheckReport> report;
  if (c.check) {
    if (plan.n() > 28) throw UsageError(fmt::format("--check executes every element; n = {} is too large (at most 28)", plan.n()));
    report = check_plan(plan);
  }
  if (c.json) {
    nlohmann::ordered_json j;
    j["variant"] = to_string(plan.variant);
    j["n"] = plan.n();
    j["elem_bytes"] = plan.elem_bytes;
    j["passes"] = nlohmann::ordered_json::array();
    for (const Pass& p : plan.passes) j["passes"].push_back(pass_json(p));
    if (report) {
      j["correct"] = report->correct;
      j["coalesced"] = report->coalesced;
      j["max_bank_conflict"] = report->max_bank_conflict;
      if (!report->correct) j["error"] = report->first_error;
    }
    print_json_after(head, j);
  } else {
    fmt::print("{}", describe(plan));
    if (report)
      fmt::print("check: correct {}, coalesced {}, max_bank_conflict {}{}\n", report->correct ? "yes" : "NO",
                 report->coalesced ? "yes" : "no", report->max_bank_conflict,
                 report->correct ? "" : " (" + report->first_error + ")");
  }
}

// The digit plan checker executes every element: plans up to this many elements are checked.
constexpr Extent kCheckDigitsUpTo = Extent{1} << 22;

// --shape: a map that is a Bmmc runs as one (bit_face, as the front door decides); any other on the digit planner.
void plan_shape(const PlanCommand& c) {
  const DigitMap map = parse_shape_spec_options(c.spec, c.shape);
  const std::string what = fmt::format("'{}' on shape {}", c.spec.spec, c.shape);
  if (const auto b = bit_face(map, c.po.elem_bytes)) {
    if (!c.json)
      fmt::print("{} runs as the BMMC on n = {} bits, class {} (bmmc show --shape {} '{}' prints its matrix)\n", what,
                 b->n(), to_string(b->classify()), c.shape, c.spec.spec);
    return plan_bmmc(*b, c, {{"runs_as", "bmmc"}, {"map", map.to_string()}, {"shape", map.shape()},
                             {"bmmc", bmmc_json(*b)}});
  }
  refuse_bit_planner_options(c.po, what,
                             {{c.in_place, "--in-place"}, {c.ranks != 0, "--ranks"}, {c.nodes != 0, "--nodes"}});
  const DigitPlan plan = plan_digits(map, c.po.elem_bytes);
  std::optional<DigitPlanReport> report;
  std::string unchecked;
  if (plan.elements() <= kCheckDigitsUpTo)
    report = check_digit_plan(plan, kCheckDigitsUpTo);
  else if (c.check)
    throw UsageError(fmt::format("--check executes every element; this plan moves {} elements (at most 2^22)",
                                 plan.elements()));
  else
    unchecked = fmt::format("not checked: the checker executes every element, and this plan moves {} elements "
                            "(more than 2^22)",
                            plan.elements());
  if (c.json) {
    nlohmann::ordered_json check;
    check["checked"] = report.has_value();
    if (report) {
      check["ok"] = report->ok;
      if (!report->ok) check["error"] = report->error;
      check["writes"] = report->writes;
      check["read_conflicts"] = report->read_conflicts;
      check["write_conflicts"] = report->write_conflicts;
      check["read_run"] = report->read_run;
      check["write_run"] = report->write_run;
    } else {
      check["why"] = unchecked;
    }
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(to_json(plan));
    j["check"] = check;
    return print_json_after({{"runs_as", "digits"}}, j);
  }
  fmt::print("{}", to_string(plan));
  if (report)
    fmt::print("check: correct {}, {} writes, bank conflicts {}-way (read) {}-way (write), longest runs {} (read) "
               "{} (write) elements{}\n",
               report->ok ? "yes" : "NO", report->writes, report->read_conflicts, report->write_conflicts,
               report->read_run, report->write_run, report->ok ? "" : " (" + report->error + ")");
  else
    fmt::print("check: {}\n", unchecked);
}

void add_plan(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("plan", "Print the kernel plan for SPEC (V basis, q, rows, swizzle, geometry; with "
                                         "--shape an any-shape map's digit plan, checked)");
  auto c = std::make_shared<PlanCommand>();
  add_spec_options(sub, c->spec);
  add_shape_option(sub, c->shape);
  add_plan_options(sub, c->po);
  sub->add_flag("--json", c->json, "print the plan as JSON");
  sub->add_flag("--check", c->check,
                "run the plan checker (CPU interpreter of every block, warp and lane): correct, coalesced, "
                "max_bank_conflict; a digit plan (--shape) is checked whenever it has at most 2^22 elements");
  sub->add_option("--ranks", c->ranks,
                  "print the distributed plan over G ranks (a power of two; rank = the top log2(G) index bits): "
                  "k, groups, chunks, pre/post-pass and the schedule of rank 0 (every rank when G <= 16)");
  sub->add_option("--nodes", c->nodes,
                  "with --ranks G: the plan across N nodes (a power of two, N <= G; rank = node * G/N + local rank): "
                  "intra-node pre, one inter-node exchange, intra-node post, and the bytes over the network per rank "
                  "against the bound");
  sub->add_flag("--in-place", c->in_place,
                "print the in-place plan: the BMMC as a product of involutions, one pass each (\"passes\", "
                "\"involution\" in --json); --check proves it race-free");
  add_spec_footer(sub);
  sub->callback([&run, c] {
    run = [c] {
      if (!c->shape.empty()) return plan_shape(*c);
      plan_bmmc(parse_spec_options(c->spec), *c);
    };
  });
}

const Registrar reg(50, add_plan);

}  // namespace
}  // namespace bmmc::cli
