#include "common/yaml/yaml_document.h"

#include <optional>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

namespace rftp::yaml {
namespace {

// Remembers where a document's first event is; ignores the rest.
class DocumentStart : public YAML::EventHandler {
public:
    std::optional<YAML::Mark> mark;

    void OnDocumentStart(const YAML::Mark &m) override { note(m); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &m, YAML::anchor_t) override { note(m); }
    void OnAlias(const YAML::Mark &m, YAML::anchor_t) override { note(m); }
    void OnScalar(const YAML::Mark &m, const std::string &, YAML::anchor_t, const std::string &) override { note(m); }
    void OnSequenceStart(const YAML::Mark &m, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {
        note(m);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark &m, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {
        note(m);
    }
    void OnMapEnd() override {}

private:
    void note(const YAML::Mark &m) {
        if (!mark) mark = m;
    }
};

std::string position(const std::string &source, const YAML::Mark &m) {
    return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

}  // namespace

Result<YAML::Node> load_one_document(std::string_view text, const std::string &source) {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    std::optional<YAML::Mark> last_start;
    unsigned documents = 0;
    for (;;) {
        DocumentStart start;
        if (!parser.HandleNextDocument(start)) break;
        // Each real document begins further on; one that begins where the
        // last began is the parser going round without reading anything.
        if (start.mark && last_start && start.mark->pos == last_start->pos)
            return fail_msg(position(source, *start.mark) + ": invalid YAML: nothing here starts a document",
                            -EINVAL);
        if (start.mark) last_start = start.mark;
        ++documents;
    }
    if (documents > 1)
        return fail_msg(source + ": holds " + std::to_string(documents) +
                            " YAML documents (separated by ---); rftpd reads one: merge them",
                        -EINVAL);
    return YAML::Load(std::string(text));
}

}  // namespace rftp::yaml
