#include "rejection.hpp"

#include <cctype>
#include <cstring>

namespace dka {

namespace {

struct context_holder {
  dk_context* ctx = nullptr;
  context_holder() {
    if (dk_context_create(DK_BACKEND_CPU, 0, &ctx) != DK_STATUS_SUCCESS) ctx = nullptr;
  }
  ~context_holder() { dk_context_destroy(ctx); }
};

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

using snapshot = std::vector<std::vector<unsigned char>>;

snapshot take(const std::vector<buffer*>& buffers) {
  snapshot s;
  for (const buffer* b : buffers) s.push_back(b->host);
  return s;
}

// Downloads every buffer and counts the bytes that differ from `before`.
std::size_t changed_bytes(const std::vector<buffer*>& buffers, const snapshot& before) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    buffers[i]->download();
    for (std::size_t byte = 0; byte < before[i].size(); ++byte) n += buffers[i]->host[byte] != before[i][byte];
  }
  return n;
}

void check_message(const char* entry, dk_status got, dk_status expected,
                   const std::vector<std::string>& words) {
  const std::string message = dk_last_error();
  INFO(entry << " -> " << dk_status_string(got) << ": \"" << message << "\"");
  CHECK(got == expected);
  CHECK(!message.empty());
  for (const std::string& w : words) {
    INFO("the message should name `" << w << "`");
    CHECK(names(message, w));
  }
}

}  // namespace

dk_context* cpu_ctx() {
  static context_holder holder;
  REQUIRE_MESSAGE(holder.ctx != nullptr, "dk_context_create(DK_BACKEND_CPU) failed: " << dk_last_error());
  return holder.ctx;
}

bool names(const std::string& text, const std::string& word) {
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !ident(text[at - 1]);
    const bool right = at + word.size() >= text.size() || !ident(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

decode_spec valid_decode() {
  decode_spec s;
  s.B = 2;
  s.T = 2;
  s.heads = {2, 4, 64, 64};
  s.seed = 7;
  return s;
}

prefill_spec valid_prefill() {
  prefill_spec s;
  s.lens = {40, 25};
  s.heads = {2, 4, 64, 64};
  s.initial = true;
  s.final = final_dst::slots;
  s.seed = 8;
  return s;
}

void expect_decode_rejected(const decode_spec& spec, dk_status expected,
                            const std::vector<std::string>& words, check_mode mode,
                            const std::function<void(decode_call&)>& mutate) {
  INFO(spec.describe());
  decode_problem p(cpu_ctx(), spec);
  decode_call call{cpu_ctx(), p.config, p.args(), {}, false, false};
  {  // the unbroken call is valid: the rule, not the base problem, is what fails
    const char* impl = nullptr;
    const dk_status s = dk_decode_query(call.context, &call.config, &call.args, &impl);
    INFO("valid base problem: " << dk_last_error());
    REQUIRE(s == DK_STATUS_SUCCESS);
  }
  mutate(call);
  const dk_config* config = call.null_config ? nullptr : &call.config;
  const dk_decode_args* args = call.null_args ? nullptr : &call.args;
  const std::vector<buffer*> buffers = p.buffers();
  p.upload();
  const snapshot before = take(buffers);

  if (mode == kQueryToo) {
    const char* impl = nullptr;
    const dk_status s = dk_decode_query(call.context, config, args, &impl);
    check_message("dk_decode_query", s, expected, words);
    CHECK(impl == nullptr);
  }
  const dk_status s = dk_decode_run(call.context, config, args, nullptr);
  check_message("dk_decode_run", s, expected, words);
  CHECK(changed_bytes(buffers, before) == 0);
}

void expect_prefill_rejected(const prefill_spec& spec, dk_status expected,
                             const std::vector<std::string>& words, check_mode mode,
                             const std::function<void(prefill_call&)>& mutate) {
  INFO(spec.describe());
  prefill_problem p(cpu_ctx(), spec);
  prefill_call call{cpu_ctx(), p.config, p.args(), nullptr, 0, {}, false, false};
  std::size_t needed = 0;
  {
    const dk_status s = dk_prefill_workspace_size(call.context, &call.config, &call.args, &needed);
    INFO("valid base problem: " << dk_last_error());
    REQUIRE(s == DK_STATUS_SUCCESS);
  }
  void* workspace = nullptr;
  if (needed > 0) REQUIRE(dk_malloc(cpu_ctx(), needed, &workspace) == DK_STATUS_SUCCESS);
  call.workspace = workspace;
  call.workspace_bytes = needed;
  mutate(call);
  const dk_config* config = call.null_config ? nullptr : &call.config;
  const dk_prefill_args* args = call.null_args ? nullptr : &call.args;
  const std::vector<buffer*> buffers = p.buffers();
  p.upload();
  const snapshot before = take(buffers);

  if (mode == kQueryToo) {
    const char* impl = nullptr;
    dk_status s = dk_prefill_query(call.context, config, args, &impl);
    check_message("dk_prefill_query", s, expected, words);
    CHECK(impl == nullptr);
    std::size_t bytes = 12345;
    s = dk_prefill_workspace_size(call.context, config, args, &bytes);
    check_message("dk_prefill_workspace_size", s, expected, words);
  }
  const dk_status s = dk_prefill_run(call.context, config, args, call.workspace,
                                     call.workspace_bytes, nullptr);
  check_message("dk_prefill_run", s, expected, words);
  CHECK(changed_bytes(buffers, before) == 0);
  if (workspace) dk_free(cpu_ctx(), workspace);
}

}  // namespace dka
