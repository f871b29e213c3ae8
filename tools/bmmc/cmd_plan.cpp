// `bmmc plan SPEC` — print the kernel plan, optionally proved by the plan checker (--check).
#include <fmt/format.h>

#include <memory>
#include <variant>

#include "bmmc/plan/plan_check.hpp"
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
  j["v_basis"] = t.read_rows;
  j["write_rows"] = t.write_rows;
  j["block_bits"] = t.block_positions;
  j["swizzle"] = t.swizzle;
  j["blocks"] = t.blocks();
  j["threads"] = t.threads_per_block();
  j["elems_per_thread"] = t.elems_per_thread();
  j["shared_bytes"] = t.shared_bytes();
  return j;
}

void add_plan(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("plan", "Print the kernel plan for SPEC (V basis, q, rows, swizzle, geometry)");
  auto spec = std::make_shared<SpecOptions>();
  auto po = std::make_shared<PlanCliOptions>();
  auto json = std::make_shared<bool>(false);
  auto check = std::make_shared<bool>(false);
  add_spec_options(sub, *spec);
  add_plan_options(sub, *po);
  sub->add_flag("--json", *json, "print the plan as JSON");
  sub->add_flag("--check", *check,
                "run the plan checker (CPU interpreter of every block, warp and lane): correct, coalesced, "
                "max_bank_conflict");
  sub->callback([&run, spec, po, json, check] {
    run = [spec, po, json, check] {
      const Bmmc b = parse_spec_options(*spec);
      const Plan plan = make_plan(b, po->elem_bytes, default_caps(), to_gpu_policy(*po));
      std::optional<CheckReport> report;
      if (*check) {
        if (plan.n() > 28) throw UsageError(fmt::format("--check executes every element; n = {} is too large (at most 28)", plan.n()));
        report = check_plan(plan);
      }
      if (*json) {
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
        print_json(j);
      } else {
        fmt::print("{}", describe(plan));
        if (report)
          fmt::print("check: correct {}, coalesced {}, max_bank_conflict {}{}\n", report->correct ? "yes" : "NO",
                     report->coalesced ? "yes" : "no", report->max_bank_conflict,
                     report->correct ? "" : " (" + report->first_error + ")");
      }
    };
  });
}

const Registrar reg(50, add_plan);

}  // namespace
}  // namespace bmmc::cli
