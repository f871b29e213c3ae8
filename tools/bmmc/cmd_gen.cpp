// `bmmc gen SPEC` — emit the specialised CUDA kernel(s) of a plan (the paper's offline setting). With --shape S
// an any-shape map: one that is a BMMC gets the BMMC kernel(s), as the front door runs it; any other the kernel
// of its digit plan (codegen/digit_source.hpp).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/codegen/digit_source.hpp"
#include "bmmc/plan/digit_plan.hpp"
#include "bmmc/dispatch/array_file.hpp"
#include "bmmc/permute.hpp"
#include "cli_common.hpp"
#include "plan_options.hpp"

namespace bmmc::cli {
namespace {

struct GenCommand {
  SpecOptions spec;
  std::string shape;
  PlanCliOptions po;
  std::string out;
  bool streaming = false;
};

// The source of every kernel of a Bmmc's plan, passes marked when there are several.
std::string bmmc_source(const Bmmc& b, const GenCommand& c) {
  const Plan plan = make_plan(b, c.po.elem_bytes, default_caps(), to_gpu_policy(c.po));
  std::string text;
  const auto kernels = generate_cuda(plan, CodegenOptions{c.streaming});
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels.size() > 1)
      text += fmt::format("// ===== pass {} of {}: {} =====\n", i + 1, kernels.size(),
                          i == 0 ? "writes the temporary buffer" : "reads the temporary buffer");
    text += kernels[i].source;
  }
  return text;
}

// --shape: the kernel the front door runs for the map (bit_face, bmmc/permute.hpp).
std::string shape_source(const GenCommand& c) {
  const DigitMap map = parse_shape_spec_options(c.spec, c.shape);
  if (const auto b = bit_face(map, c.po.elem_bytes)) return bmmc_source(*b, c);
  refuse_bit_planner_options(c.po, fmt::format("'{}' on shape {}", c.spec.spec, c.shape));
  return generate_digit_cuda(plan_digits(map, c.po.elem_bytes), CodegenOptions{c.streaming}).source;
}

void add_gen(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("gen", "Emit the CUDA source of the kernel(s) for SPEC, complement included (with "
                                        "--shape: of an any-shape map)");
  auto c = std::make_shared<GenCommand>();
  add_spec_options(sub, c->spec);
  add_shape_option(sub, c->shape);
  add_plan_options(sub, c->po);
  sub->add_option("-o,--output", c->out, "write the source to FILE instead of stdout")->check(file_name());
  sub->add_flag("--streaming", c->streaming, "use __ldcs/__stcs (evict-first) global accesses");
  add_spec_footer(sub);
  sub->callback([&run, c] {
    run = [c] {
      const std::string text = c->shape.empty() ? bmmc_source(parse_spec_options(c->spec), *c) : shape_source(*c);
      if (c->out.empty())
        fmt::print("{}", text);
      else
        write_file_atomic(c->out, text.data(), text.size());
    };
  });
}

const Registrar reg(60, add_gen);

}  // namespace
}  // namespace bmmc::cli
