// `bmmc gen SPEC` — emit the specialised CUDA kernel(s) of a plan (the paper's offline setting).
#include <fmt/format.h>

#include <memory>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/dispatch/array_file.hpp"
#include "cli_common.hpp"
#include "plan_options.hpp"

namespace bmmc::cli {
namespace {

void add_gen(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("gen", "Emit the CUDA source of the kernel(s) for SPEC, complement included");
  auto spec = std::make_shared<SpecOptions>();
  auto po = std::make_shared<PlanCliOptions>();
  auto out = std::make_shared<std::string>();
  auto streaming = std::make_shared<bool>(false);
  add_spec_options(sub, *spec);
  add_plan_options(sub, *po);
  sub->add_option("-o,--output", *out, "write the source to FILE instead of stdout")->check(file_name());
  sub->add_flag("--streaming", *streaming, "use __ldcs/__stcs (evict-first) global accesses");
  sub->callback([&run, spec, po, out, streaming] {
    run = [spec, po, out, streaming] {
      const Bmmc b = parse_spec_options(*spec);
      const Plan plan = make_plan(b, po->elem_bytes, default_caps(), to_gpu_policy(*po));
      std::string text;
      const auto kernels = generate_cuda(plan, CodegenOptions{*streaming});
      for (size_t i = 0; i < kernels.size(); ++i) {
        if (kernels.size() > 1)
          text += fmt::format("// ===== pass {} of {}: {} =====\n", i + 1, kernels.size(),
                              i == 0 ? "writes the temporary buffer" : "reads the temporary buffer");
        text += kernels[i].source;
      }
      if (out->empty())
        fmt::print("{}", text);
      else
        write_file_atomic(*out, text.data(), text.size());
    };
  });
}

const Registrar reg(60, add_gen);

}  // namespace
}  // namespace bmmc::cli
