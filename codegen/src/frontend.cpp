// Front end: three clang passes per library, each over an in-memory
// translation unit that includes the library's headers.
//   1. the AST: functions, enums, records, typedefs, doc comments, and the
//      object-like macros with their locations;
//   2. preprocessing only, with CUDA_API_PER_THREAD_DEFAULT_STREAM defined:
//      the `#define cuX cuX_v2` renames and which of them have per-thread
//      default stream variants (some are only defined under that macro);
//   3. the macros' values, by letting clang evaluate each one as an
//      initializer, so casts and expressions need no evaluator of ours.
#include "codegen/frontend.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Expr.h>
#include <clang/AST/RawCommentList.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Lex/MacroInfo.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/Tooling.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>


// An integer constant as int64_t: an unsigned one above INT64_MAX (NVML's
// 0xFFFFFFFFFFFFFFFFULL) keeps its 64 bits, where APSInt::getExtValue asserts.
static int64_t ext_value(const llvm::APSInt& v) {
  return v.isSigned() ? v.getSExtValue() : static_cast<int64_t>(v.getZExtValue());
}

namespace codegen {
namespace {

namespace fs = std::filesystem;

std::string base_name(llvm::StringRef path) { return fs::path(path.str()).filename().string(); }

// ---------------------------------------------------------------------------
// Doc comments

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Formatted text of a raw comment, with the leading '<' of trailing comments gone.
std::string comment_text(const clang::RawComment* rc, const clang::SourceManager& sm,
                         clang::DiagnosticsEngine& diags) {
  if (rc == nullptr) return "";
  std::string text = rc->getFormattedText(sm, diags);
  if (!text.empty() && text[0] == '<') text.erase(0, 1);
  return trim(text);
}

// `\param[out] name - text` entries of a function's documentation.
struct ParamDoc {
  std::string text;
  std::string direction;
};

std::map<std::string, ParamDoc> parse_param_docs(const std::string& doc) {
  std::map<std::string, ParamDoc> out;
  static const std::regex param_re(R"(\\param\s*(\[(in|out|in,out|inout)\])?\s+(\w+)\s*-?\s*)");
  std::smatch m;
  std::string rest = doc;
  while (std::regex_search(rest, m, param_re)) {
    const std::string name = m[3];
    std::string direction = m[2];
    if (direction == "in,out") direction = "inout";
    std::string tail = m.suffix();
    // The text runs to the next command (\param, \return, \note, ...) or a blank line.
    // Inline commands (\\p, \\c, \\e, \\ref) are part of the text; block commands end it.
    static const std::regex end_re(
        R"(\\(param|return|returns|retval|note|notefnerr|note_[a-z_]+|sa|see|brief|details|deprecated)\b|\n\s*\n)");
    std::smatch e;
    std::string text = std::regex_search(tail, e, end_re) ? tail.substr(0, e.position(0)) : tail;
    out[name] = ParamDoc{trim(text), direction};
    rest = tail;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Macros seen while preprocessing

struct RawMacro {
  std::string name;
  std::vector<std::string> tokens;
  std::string file;
  clang::SourceLocation location;
};

bool owned(const std::set<std::string>& owned_files, const std::string& file) {
  return owned_files.count(file) != 0;
}

class MacroRecorder : public clang::PPCallbacks {
 public:
  MacroRecorder(clang::Preprocessor& pp, std::set<std::string> owned_files, std::vector<RawMacro>& out)
      : pp_(pp), owned_files_(std::move(owned_files)), out_(out) {}

  void MacroDefined(const clang::Token& name_tok, const clang::MacroDirective* md) override {
    const clang::MacroInfo* mi = md->getMacroInfo();
    if (mi == nullptr || mi->isFunctionLike() || mi->isBuiltinMacro()) return;
    const auto& sm = pp_.getSourceManager();
    const clang::SourceLocation loc = sm.getFileLoc(mi->getDefinitionLoc());
    if (loc.isInvalid()) return;
    const std::string file = base_name(sm.getFilename(loc));
    if (!owned(owned_files_, file)) return;
    RawMacro m;
    m.name = name_tok.getIdentifierInfo()->getName().str();
    m.file = file;
    m.location = loc;
    for (const clang::Token& t : mi->tokens()) m.tokens.push_back(pp_.getSpelling(t));
    out_.push_back(std::move(m));
  }

 private:
  clang::Preprocessor& pp_;
  std::set<std::string> owned_files_;
  std::vector<RawMacro>& out_;
};

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string s;
  for (const auto& t : tokens) {
    if (!s.empty()) s += ' ';
    s += t;
  }
  return s;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// ---------------------------------------------------------------------------
// Types

class TypeMapper {
 public:
  explicit TypeMapper(clang::ASTContext& ctx) : ctx_(ctx), policy_(ctx.getPrintingPolicy()) {
    policy_.SuppressScope = false;
    policy_.AnonymousTagLocations = false;
  }

  // Names given to unnamed records, by declaration.
  std::map<const clang::RecordDecl*, std::string> record_names;

  std::string record_name(const clang::RecordDecl* rd) const {
    rd = rd->getDefinition() ? rd->getDefinition() : rd;
    if (auto it = record_names.find(rd); it != record_names.end()) return it->second;
    if (const auto* td = rd->getTypedefNameForAnonDecl()) return td->getName().str();
    return rd->getName().str();
  }

  std::string spell(clang::QualType qt) const { return qt.getAsString(policy_); }

  Type::Kind kind_of(clang::QualType qt) const {
    if (const auto* tt = qt->getAs<clang::TypedefType>()) {
      const clang::QualType under = tt->getDecl()->getUnderlyingType();
      if (is_handle(under)) return Type::Kind::Handle;
    }
    const clang::QualType c = qt.getCanonicalType();
    if (c->isVoidType()) return Type::Kind::Void;
    if (c->isEnumeralType()) return Type::Kind::Enum;
    if (c->isRecordType()) return Type::Kind::Record;
    if (c->isFunctionPointerType()) return Type::Kind::FunctionPointer;
    if (c->isPointerType()) return Type::Kind::Pointer;
    if (c->isConstantArrayType()) return Type::Kind::Array;
    return Type::Kind::Builtin;
  }

  static bool is_handle(clang::QualType under) {
    const clang::QualType c = under.getCanonicalType();
    if (!c->isPointerType()) return false;
    const clang::QualType pointee = c->getPointeeType();
    // typedef struct CUctx_st *CUcontext; and typedef const struct cudaArray *cudaArray_const_t;
    return pointee->isRecordType() && under->getAs<clang::TypedefType>() == nullptr;
  }

  Type map(clang::QualType qt) const {
    Type t;
    t.kind = kind_of(qt);
    t.canonical = spell(qt.getCanonicalType());
    if (const auto* rt = qt.getCanonicalType()->getAs<clang::RecordType>()) {
      t.record = record_name(rt->getDecl());
    }
    // Unnamed records have no spelling of their own: use the name we gave them.
    if (t.kind == Type::Kind::Record && qt->getAs<clang::TypedefType>() == nullptr) {
      const auto* rd = qt.getCanonicalType()->getAs<clang::RecordType>()->getDecl();
      t.spelling = rd->getName().empty() && rd->getTypedefNameForAnonDecl() == nullptr
                       ? t.record
                       : spell(qt);
    } else {
      t.spelling = spell(qt);
    }
    if (t.kind == Type::Kind::Pointer) {
      // Count the '*' as written: a typedef such as CUcontext ends the walk,
      // so "CUcontext *" is one level deep, not two.
      clang::QualType p = qt;
      while (true) {
        const clang::Type* ty = p.getTypePtr();
        while (true) {
          if (const auto* e = llvm::dyn_cast<clang::ElaboratedType>(ty)) {
            ty = e->getNamedType().getTypePtr();
          } else if (const auto* par = llvm::dyn_cast<clang::ParenType>(ty)) {
            ty = par->getInnerType().getTypePtr();
          } else if (const auto* at = llvm::dyn_cast<clang::AttributedType>(ty)) {
            ty = at->getModifiedType().getTypePtr();
          } else if (const auto* mq = llvm::dyn_cast<clang::MacroQualifiedType>(ty)) {
            ty = mq->getUnderlyingType().getTypePtr();
          } else {
            break;
          }
        }
        const auto* pt = llvm::dyn_cast<clang::PointerType>(ty);
        if (pt == nullptr) break;
        ++t.pointer_depth;
        p = pt->getPointeeType();
        if (t.pointer_depth == 1) {
          t.pointee_const = p.isConstQualified();
          clang::QualType unqual = p.getUnqualifiedType();
          t.pointee_kind = kind_of(unqual);
          t.pointee = spell(unqual);
          if (const auto* rt = unqual.getCanonicalType()->getAs<clang::RecordType>()) {
            t.record = record_name(rt->getDecl());
          }
        }
        if (p->isFunctionType()) break;
      }
    }
    if (t.kind == Type::Kind::Array) {
      clang::QualType e = qt;
      while (const auto* at = ctx_.getAsConstantArrayType(e)) {
        t.extents.push_back(at->getSize().getZExtValue());
        e = at->getElementType();
      }
      t.element = spell(e);
      if (const auto* rt = e.getCanonicalType()->getAs<clang::RecordType>()) {
        t.record = record_name(rt->getDecl());
        if (rt->getDecl()->getName().empty() && rt->getDecl()->getTypedefNameForAnonDecl() == nullptr) {
          t.element = t.record;
        }
      }
    }
    return t;
  }

 private:
  clang::ASTContext& ctx_;
  clang::PrintingPolicy policy_;
};

// ---------------------------------------------------------------------------
// Pass 1: the AST

struct AstResult {
  Library library;
  std::vector<RawMacro> macros;
  std::map<std::string, std::string> macro_docs;
  // PFN_<name>_v<version> typedefs: name -> (version, parameter count)
  std::map<std::string, std::vector<std::pair<int, unsigned>>> pfn;
};

class Visitor : public clang::RecursiveASTVisitor<Visitor> {
 public:
  Visitor(clang::ASTContext& ctx, const std::set<std::string>& owned_files, AstResult& out)
      : ctx_(ctx), sm_(ctx.getSourceManager()), owned_(owned_files), out_(out), types_(ctx) {}
  // Typedefs of headers not owned that are recorded all the same.
  void set_foreign_types(std::set<std::string> names) { foreign_ = std::move(names); }

  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitFunctionDecl(clang::FunctionDecl* fd) {
    if (!in_owned_file(fd) || fd->getName().empty()) return true;
    const std::string name = fd->getName().str();
    // Exported versioned symbols behind static inline wrappers (nvJitLink) are
    // recorded through the wrapper, not bound themselves.
    if (name.rfind("__", 0) == 0) {
      versioned_docs_[name] = doc_of(fd);
      return true;
    }
    if (fd->isThisDeclarationADefinition() && fd->getStorageClass() != clang::SC_Static) return true;
    if (seen_functions_.count(name)) return true;
    seen_functions_.insert(name);

    Function f;
    f.name = name;
    f.abi_symbol = name;
    f.order = next_order();
    f.location = location_of(fd);
    f.result = types_.map(fd->getReturnType());
    f.doc = doc_of(fd);
    if (f.doc.empty()) f.doc = doc_before(fd->getBeginLoc(), name);
    if (const auto* dep = fd->getAttr<clang::DeprecatedAttr>()) f.deprecated = dep->getMessage().str();
    if (fd->getStorageClass() == clang::SC_Static && fd->hasBody()) {
      f.versioned_symbol = called_function(fd->getBody());
      if (f.versioned_symbol.empty()) {
        // A helper that calls nothing (make_cudaExtent): it runs from the header.
        f.header_inline = true;
      } else {
        f.abi_symbol = f.versioned_symbol;
        if (f.doc.empty()) pending_doc_.push_back(out_.library.functions.size());
      }
    }
    unsigned index = 0;
    for (const clang::ParmVarDecl* p : fd->parameters()) {
      Param param;
      param.name = p->getName().empty() ? "arg" + std::to_string(index) : p->getName().str();
      param.type = types_.map(p->getType());
      f.params.push_back(std::move(param));
      ++index;
    }
    attach_param_docs(f);
    out_.library.functions.push_back(std::move(f));
    return true;
  }

  bool VisitEnumDecl(clang::EnumDecl* ed) {
    if (!in_owned_file(ed) || !ed->isThisDeclarationADefinition()) return true;
    Enum e;
    e.tag = ed->getName().str();
    if (const auto* td = ed->getTypedefNameForAnonDecl()) {
      e.name = td->getName().str();
    } else {
      e.name = e.tag;
    }
    if (e.name.empty()) e.name = "anon_enum_" + std::to_string(out_.library.enums.size());
    e.order = next_order();
    e.location = location_of(ed);
    e.doc = doc_of(ed);
    for (const clang::EnumConstantDecl* c : ed->enumerators()) {
      Enumerator en;
      en.name = c->getName().str();
      en.value = ext_value(c->getInitVal());
      en.doc = doc_of(c);
      e.enumerators.push_back(std::move(en));
    }
    enum_by_tag_[e.tag] = out_.library.enums.size();
    out_.library.enums.push_back(std::move(e));
    return true;
  }

  bool VisitRecordDecl(clang::RecordDecl* rd) {
    if (!in_owned_file(rd)) return true;
    if (rd->isThisDeclarationADefinition()) {
      // Unnamed records nested in another are converted with their parent.
      if (is_unnamed(rd) && llvm::isa<clang::RecordDecl>(rd->getDeclContext())) return true;
      convert_record(rd, "", "");
    } else if (!rd->getDefinition() && !rd->getName().empty() && !opaque_.count(rd->getName().str())) {
      // struct CUctx_st; : opaque, only ever used through a handle.
      opaque_.insert(rd->getName().str());
      Record r;
      r.name = rd->getName().str();
      r.tag = r.name;
      r.is_union = rd->isUnion();
      r.is_complete = false;
      r.order = next_order();
      r.location = location_of(rd);
      out_.library.records.push_back(std::move(r));
    }
    return true;
  }

  bool VisitTypedefNameDecl(clang::TypedefNameDecl* td) {
    const std::string name = td->getName().str();
    const clang::QualType under = td->getUnderlyingType();
    if (name.rfind("PFN_", 0) == 0) {
      record_pfn(name, under);
      return true;
    }
    if (!in_owned_file(td) && !foreign_.count(name)) return true;
    // typedef struct { ... } X; names the record itself.
    if (const auto* tag = under->getAsTagDecl()) {
      if (tag->getTypedefNameForAnonDecl() == td) return true;
    }
    Typedef t;
    t.name = name;
    t.order = next_order();
    t.location = location_of(td);
    t.doc = doc_of(td);
    t.target = types_.map(under);
    const clang::QualType c = under.getCanonicalType();
    if (TypeMapper::is_handle(under)) {
      t.kind = Typedef::Kind::Handle;
      t.record = types_.record_name(c->getPointeeType()->getAs<clang::RecordType>()->getDecl());
    } else if (c->isFunctionPointerType()) {
      t.kind = Typedef::Kind::FunctionPointer;
      const auto* fpt = c->getPointeeType()->getAs<clang::FunctionProtoType>();
      // Parameter names live on the typedef's FunctionProtoTypeLoc.
      std::vector<std::string> names;
      if (auto tsi = td->getTypeSourceInfo()) {
        clang::TypeLoc tl = tsi->getTypeLoc();
        while (true) {
          if (auto ptl = tl.getAs<clang::PointerTypeLoc>()) {
            tl = ptl.getPointeeLoc();
          } else if (auto par = tl.getAs<clang::ParenTypeLoc>()) {
            tl = par.getInnerLoc();
          } else if (auto attr = tl.getAs<clang::AttributedTypeLoc>()) {
            tl = attr.getModifiedLoc();
          } else {
            break;
          }
        }
        if (auto ftl = tl.getAs<clang::FunctionProtoTypeLoc>()) {
          for (unsigned i = 0; i < ftl.getNumParams(); ++i) {
            const auto* p = ftl.getParam(i);
            names.push_back(p && !p->getName().empty() ? p->getName().str() : "arg" + std::to_string(i));
          }
        }
      }
      if (fpt != nullptr) {
        // Spell the callback's types off the sugared prototype to keep typedef names.
        const clang::FunctionProtoType* sugared = nullptr;
        clang::QualType p = under;
        while (!p.isNull()) {
          if (const auto* pt = p->getAs<clang::PointerType>()) {
            p = pt->getPointeeType();
          } else if (const auto* paren = llvm::dyn_cast<clang::ParenType>(p.getTypePtr())) {
            p = paren->getInnerType();
          } else {
            sugared = p->getAs<clang::FunctionProtoType>();
            break;
          }
        }
        if (sugared == nullptr) sugared = fpt;
        t.fn_result = types_.map(sugared->getReturnType());
        for (unsigned i = 0; i < sugared->getNumParams(); ++i) {
          Param param;
          param.name = i < names.size() ? names[i] : "arg" + std::to_string(i);
          param.type = types_.map(sugared->getParamType(i));
          t.fn_params.push_back(std::move(param));
        }
      }
    } else if (c->isRecordType()) {
      t.kind = Typedef::Kind::RecordAlias;
      t.record = types_.record_name(c->getAs<clang::RecordType>()->getDecl());
    } else if (c->isEnumeralType()) {
      t.kind = Typedef::Kind::EnumAlias;
    } else {
      t.kind = Typedef::Kind::Alias;
    }
    if (!in_owned_file(td)) {
      // Another library's type: spelled by what it is, since that library's
      // headers may be absent where the bindings are built.
      t.foreign = true;
      if (c->isFunctionType()) {
        t.target = Type{};
        t.target.kind = Type::Kind::Void;
        t.target.spelling = t.target.canonical = "void";
      } else {
        t.target.spelling = t.target.canonical;
      }
    }
    out_.library.typedefs.push_back(std::move(t));
    return true;
  }

  // Called once the whole translation unit was visited.
  void finish() {
    // typedef enum cudaError_enum {...} CUresult; and typedef enum cudaError cudaError_t;
    // name the enum as users write it.
    for (const Typedef& t : out_.library.typedefs) {
      if (t.kind != Typedef::Kind::EnumAlias || t.target.spelling.rfind("enum ", 0) != 0) continue;
      const std::string tag = t.target.spelling.substr(5);
      auto it = enum_by_tag_.find(tag);
      if (it == enum_by_tag_.end()) continue;
      Enum& e = out_.library.enums[it->second];
      if (e.name == e.tag) e.name = t.name;
    }
    for (const std::size_t i : pending_doc_) {
      Function& f = out_.library.functions[i];
      if (auto it = versioned_docs_.find(f.versioned_symbol); it != versioned_docs_.end()) {
        f.doc = it->second;
        attach_param_docs(f);
      }
    }
  }

  // Doc comments of macros: the doc comment that ends right before the #define.
  void collect_macro_docs(const std::vector<RawMacro>& macros) {
    for (const RawMacro& m : macros) {
      std::string doc = doc_before(m.location);
      if (!doc.empty()) out_.macro_docs[m.name] = std::move(doc);
    }
  }

 private:
  // The doc comment that ends right before `loc`, with nothing but white
  // space and preprocessor lines (#define, #ifndef) between them. Clang does
  // not attach such comments itself.
  std::string doc_before(clang::SourceLocation loc, const std::string& name = "") const {
    loc = sm_.getFileLoc(loc);
    const clang::FileID fid = sm_.getFileID(loc);
    const auto* comments = ctx_.Comments.getCommentsInFile(fid);
    if (comments == nullptr || comments->empty()) return "";
    const unsigned offset = sm_.getFileOffset(loc);
    auto it = comments->upper_bound(offset);
    if (it == comments->begin()) return "";
    --it;
    const clang::RawComment* rc = it->second;
    if (rc->isTrailingComment() || !rc->isDocumentation()) return "";
    const unsigned end = sm_.getFileOffset(rc->getEndLoc());
    const llvm::StringRef buffer = sm_.getBufferData(fid);
    if (end >= offset || offset > buffer.size()) return "";
    // Allowed between them: the rest of the comment's last line, conditional
    // directives (#ifndef NVJITLINK_NO_INLINE), and the start of the
    // declaration's own line ("#define ", "static inline ").
    std::vector<std::string> lines;
    std::istringstream gap(buffer.substr(end + 1, offset - end - 1).str());
    for (std::string line; std::getline(gap, line);) lines.push_back(trim(line));
    static const std::regex conditional_re(R"(#\s*(if|ifdef|ifndef|elif|else|endif)\b.*)");
    // Also allowed: another declaration of the same function in the other
    // branch of an #if (cuda_runtime_api.h declares C++ and C variants). The
    // last line is the start of the declaration's own line.
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i].empty() || std::regex_match(lines[i], conditional_re)) continue;
      if (!name.empty() && lines[i].find(name + "(") != std::string::npos) continue;
      return "";
    }
    if (!lines.empty() && lines.back().find_first_of(";}") != std::string::npos) return "";
    return comment_text(rc, sm_, ctx_.getDiagnostics());
  }

  unsigned next_order() { return order_++; }

  bool in_owned_file(const clang::Decl* d) const {
    const clang::SourceLocation loc = sm_.getFileLoc(d->getLocation());
    if (loc.isInvalid()) return false;
    return owned_.count(base_name(sm_.getFilename(loc))) != 0;
  }

  Location location_of(const clang::Decl* d) const {
    const clang::SourceLocation loc = sm_.getFileLoc(d->getLocation());
    return Location{base_name(sm_.getFilename(loc)), sm_.getSpellingLineNumber(loc)};
  }

  std::string doc_of(const clang::Decl* d) const {
    return comment_text(ctx_.getRawCommentForDeclNoCache(d), sm_, ctx_.getDiagnostics());
  }

  static void attach_param_docs(Function& f) {
    const auto docs = parse_param_docs(f.doc);
    for (Param& p : f.params) {
      if (auto it = docs.find(p.name); it != docs.end()) {
        p.doc = it->second.text;
        p.doc_direction = it->second.direction;
      }
    }
  }

  static bool is_unnamed(const clang::RecordDecl* rd) {
    return rd->getName().empty() && rd->getTypedefNameForAnonDecl() == nullptr;
  }

  static std::string called_function(const clang::Stmt* body) {
    if (body == nullptr) return "";
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(body)) {
      if (const auto* callee = call->getDirectCallee()) return callee->getName().str();
    }
    for (const clang::Stmt* child : body->children()) {
      std::string found = called_function(child);
      if (!found.empty()) return found;
    }
    return "";
  }

  // Converts a record definition; nested unnamed records are named after their
  // parent and field (anon_<parent>_<field>, or anon_<parent>_<n> for C11
  // anonymous members) and emitted before it.
  void convert_record(const clang::RecordDecl* rd, const std::string& synthesized, const std::string& cpp_name) {
    if (converted_.count(rd)) return;
    converted_.insert(rd);
    Record r;
    r.tag = rd->getName().str();
    r.is_union = rd->isUnion();
    r.location = location_of(rd);
    r.doc = doc_of(rd);
    if (!synthesized.empty()) {
      r.name = synthesized;
      r.synthesized_name = true;
      r.cpp_name = cpp_name;
      types_.record_names[rd] = synthesized;
    } else {
      r.name = types_.record_name(rd);
      // A named struct defined inside another is, in C++, a member of it.
      r.cpp_name = cpp_name.empty() ? r.name : cpp_name;
    }
    if (r.name.empty()) {
      // A top-level unnamed record nobody names (rare): give it a stable name.
      r.name = "anon_record_" + std::to_string(r.location.line);
      r.synthesized_name = true;
      types_.record_names[rd] = r.name;
    }
    // The C++ class through which this record's members are named: its own
    // name, or for a C11 anonymous member the enclosing record's (whose
    // members the anonymous struct or union's are).
    const auto inherited = member_scope_.find(rd);
    const std::string scope = inherited != member_scope_.end() ? inherited->second : r.cpp_name;
    unsigned anonymous_index = 0;
    for (const clang::FieldDecl* fd : rd->fields()) {
      const clang::QualType ft = fd->getType();
      const clang::RecordDecl* nested = nullptr;
      clang::QualType element = ft;
      while (const auto* at = ctx_.getAsConstantArrayType(element)) element = at->getElementType();
      if (const auto* rt = element->getAs<clang::RecordType>()) {
        const clang::RecordDecl* inner = rt->getDecl();
        if (is_unnamed(inner)) {
          nested = inner;
        } else if (inner->getLexicalDeclContext() == rd && inner->isThisDeclarationADefinition()) {
          // union U { struct Named { ... } member; }: Named belongs before U.
          convert_record(inner, "", r.cpp_name.empty() ? "" : r.cpp_name + "::" + inner->getName().str());
        }
      }
      if (nested != nullptr) {
        const std::string nested_name = "anon_" + r.name + "_" +
            (fd->isAnonymousStructOrUnion() ? std::to_string(anonymous_index++) : fd->getName().str());
        // struct { ... } sensor[3]: the element's type, not the array's.
        const std::string member_type = "decltype(" + scope + "::" + fd->getName().str() + ")";
        const std::string nested_cpp = fd->isAnonymousStructOrUnion() || scope.empty() ? ""
                                       : fd->getType()->isArrayType()
                                           ? "std::remove_all_extents<" + member_type + ">::type"
                                           : member_type;
        if (fd->isAnonymousStructOrUnion() && !scope.empty()) member_scope_[nested] = scope;
        convert_record(nested, nested_name, nested_cpp);
      }
      Field f;
      f.name = fd->getName().str();
      f.anonymous_member = fd->isAnonymousStructOrUnion();
      f.type = types_.map(ft);
      f.doc = doc_of(fd);
      if (fd->isBitField()) f.bit_width = fd->getBitWidthValue(ctx_);
      r.fields.push_back(std::move(f));
    }
    r.order = next_order();
    out_.library.records.push_back(std::move(r));
  }

  void record_pfn(const std::string& name, clang::QualType under) {
    static const std::regex pfn_re(R"(PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?)");
    std::smatch m;
    if (!std::regex_match(name, m, pfn_re) || m[3].matched) return;
    unsigned params = 0;
    const clang::QualType c = under.getCanonicalType();
    if (c->isFunctionPointerType()) {
      if (const auto* fpt = c->getPointeeType()->getAs<clang::FunctionProtoType>()) params = fpt->getNumParams();
    }
    out_.pfn[m[1]].emplace_back(std::stoi(m[2]), params);
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  const std::set<std::string>& owned_;
  std::set<std::string> foreign_;
  AstResult& out_;
  TypeMapper types_;
  unsigned order_ = 0;
  std::set<std::string> seen_functions_;
  std::set<std::string> opaque_;
  std::set<const clang::RecordDecl*> converted_;
  std::map<const clang::RecordDecl*, std::string> member_scope_;
  std::map<std::string, std::size_t> enum_by_tag_;
  std::map<std::string, std::string> versioned_docs_;
  std::vector<std::size_t> pending_doc_;
};

class AstConsumer : public clang::ASTConsumer {
 public:
  AstConsumer(const std::set<std::string>& owned_files, const std::set<std::string>& foreign_types, AstResult& out)
      : owned_(owned_files), foreign_(foreign_types), out_(out) {}
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    Visitor v(ctx, owned_, out_);
    v.set_foreign_types(foreign_);
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    v.finish();
    v.collect_macro_docs(out_.macros);
  }

 private:
  const std::set<std::string>& owned_;
  const std::set<std::string>& foreign_;
  AstResult& out_;
};

class AstAction : public clang::ASTFrontendAction {
 public:
  AstAction(std::set<std::string> owned_files, std::set<std::string> foreign_types, AstResult& out)
      : owned_(std::move(owned_files)), foreign_(std::move(foreign_types)), out_(out) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef) override {
    ci.getPreprocessor().addPPCallbacks(std::make_unique<MacroRecorder>(ci.getPreprocessor(), owned_, out_.macros));
    return std::make_unique<AstConsumer>(owned_, foreign_, out_);
  }

 private:
  std::set<std::string> owned_;
  std::set<std::string> foreign_;
  AstResult& out_;
};

// Pass 2: preprocessing only.
class MacroOnlyAction : public clang::PreprocessOnlyAction {
 public:
  MacroOnlyAction(std::set<std::string> owned_files, std::vector<RawMacro>& out)
      : owned_(std::move(owned_files)), out_(out) {}
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    ci.getPreprocessor().addPPCallbacks(std::make_unique<MacroRecorder>(ci.getPreprocessor(), owned_, out_));
    return true;
  }

 private:
  std::set<std::string> owned_;
  std::vector<RawMacro>& out_;
};

// Pass 3: clang evaluates `static const __typeof__(M) v = (M);` for each macro.
struct EvalResult {
  Macro::Kind kind = Macro::Kind::Integer;
  std::int64_t int_value = 0;
  double float_value = 0;
  std::string string_value;
  std::string c_type;
};

class EvalConsumer : public clang::ASTConsumer {
 public:
  explicit EvalConsumer(std::map<std::string, EvalResult>& out) : out_(out) {}
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    for (const clang::Decl* d : ctx.getTranslationUnitDecl()->decls()) {
      const auto* vd = llvm::dyn_cast<clang::VarDecl>(d);
      if (vd == nullptr || vd->isInvalidDecl() || !vd->hasInit()) continue;
      const std::string var = vd->getName().str();
      if (var.rfind("cubind_macro_", 0) != 0) continue;
      const std::string name = var.substr(13);
      const clang::Expr* init = vd->getInit();
      const clang::QualType type = vd->getType().getUnqualifiedType();
      EvalResult r;
      // The initializer keeps the macro's own type spelled: CUstream, CUdevice, int.
      r.c_type = init->IgnoreParenImpCasts()->getType().getAsString(ctx.getPrintingPolicy());
      clang::Expr::EvalResult value;
      if (type->isIntegralOrEnumerationType()) {
        if (!init->EvaluateAsInt(value, ctx)) continue;
        r.kind = Macro::Kind::Integer;
        r.int_value = ext_value(value.Val.getInt());
      } else if (type->isRealFloatingType()) {
        llvm::APFloat f(0.0);
        if (!init->EvaluateAsFloat(f, ctx)) continue;
        r.kind = Macro::Kind::Float;
        r.float_value = f.convertToDouble();
      } else if (llvm::isa<clang::StringLiteral>(init->IgnoreParenImpCasts())) {
        const auto* sl = llvm::dyn_cast<clang::StringLiteral>(init->IgnoreParenImpCasts());
        if (sl == nullptr) continue;
        r.kind = Macro::Kind::String;
        r.string_value = sl->getString().str();
        r.c_type = "const char *";
      } else if (type->isPointerType()) {
        // An address spelled as a cast: ((CUstream)0x1). Fold it to an integer.
        if (!init->EvaluateAsRValue(value, ctx) || !value.Val.isLValue() || value.Val.getLValueBase()) continue;
        r.kind = Macro::Kind::Pointer;
        r.int_value = value.Val.getLValueOffset().getQuantity();
      } else {
        continue;
      }
      out_[name] = r;
    }
  }

 private:
  std::map<std::string, EvalResult>& out_;
};

class EvalAction : public clang::ASTFrontendAction {
 public:
  explicit EvalAction(std::map<std::string, EvalResult>& out) : out_(out) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<EvalConsumer>(out_);
  }

 private:
  std::map<std::string, EvalResult>& out_;
};

// Collects clang's errors so a failed parse reports them.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    std::string where;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const auto& sm = info.getSourceManager();
      const auto loc = sm.getFileLoc(info.getLocation());
      where = base_name(sm.getFilename(loc)) + ":" + std::to_string(sm.getSpellingLineNumber(loc)) + ": ";
    }
    if (errors.size() < 10) errors.push_back(where + text.str().str());
  }
  std::vector<std::string> errors;
};

class SilentConsumer : public clang::DiagnosticConsumer {};

constexpr const char* kVirtualDir = "/cubind-virtual";

struct Inputs {
  std::string main_code;
  std::vector<std::string> args;
  clang::tooling::FileContentMappings virtual_files;
};

void run_clang(std::unique_ptr<clang::FrontendAction> action, const Inputs& in, const std::string& what,
               bool report_errors) {
  std::vector<std::string> args = in.args;
  ErrorCollector errors;
  SilentConsumer silent;
  // runToolOnCodeWithArgs has no diagnostic hook; ToolInvocation does.
  auto files = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(files);
  const std::string main_file = std::string(kVirtualDir) + "/cubind_input.c";
  files->addFile(main_file, 0, llvm::MemoryBuffer::getMemBufferCopy(in.main_code));
  for (const auto& [path, content] : in.virtual_files) {
    files->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(content));
  }
  auto file_manager = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
  std::vector<std::string> command = {"cubind-codegen", "-fsyntax-only"};
  command.insert(command.end(), args.begin(), args.end());
  command.push_back(main_file);
  clang::tooling::ToolInvocation invocation(command, std::move(action), file_manager.get());
  if (report_errors) {
    invocation.setDiagnosticConsumer(&errors);
  } else {
    invocation.setDiagnosticConsumer(&silent);
  }
  const bool ok = invocation.run();
  if (report_errors && (!ok || !errors.errors.empty())) {
    std::string msg = what + ": clang reported errors:";
    for (const auto& e : errors.errors) msg += "\n  " + e;
    if (errors.errors.empty()) msg += "\n  (the compiler invocation failed)";
    throw std::runtime_error(msg);
  }
}

Inputs make_inputs(const LibraryDescriptor& source, const FrontendOptions& options,
                   const clang::tooling::FileContentMappings& virtual_files) {
  Inputs in;
  in.virtual_files = virtual_files;
  for (const auto& h : source.headers) in.main_code += "#include <" + h + ">\n";
  for (const auto& h : source.extra_headers) in.main_code += "#include <" + h + ">\n";
  in.args = {"-x", "c", "-std=gnu11", "-w"};
  for (const auto& d : source.defines) in.args.push_back("-D" + d);
  if (!options.resource_dir.empty()) in.args.push_back("-resource-dir=" + options.resource_dir);
  if (!virtual_files.empty()) in.args.push_back(std::string("-I") + kVirtualDir);
  for (const auto& dir : options.include_dirs) in.args.push_back("-I" + dir);
  in.args.insert(in.args.end(), options.extra_args.begin(), options.extra_args.end());
  return in;
}

void check_inputs(const LibraryDescriptor& source, const FrontendOptions& options,
                  const clang::tooling::FileContentMappings& virtual_files) {
  if (!virtual_files.empty()) return;
  if (options.include_dirs.empty()) {
    throw std::runtime_error("no include directory given for " + source.name + " (use --cuda-include DIR)");
  }
  for (const auto& dir : options.include_dirs) {
    if (!fs::is_directory(dir)) throw std::runtime_error("include directory " + dir + " does not exist");
  }
  auto headers = source.headers;
  headers.insert(headers.end(), source.extra_headers.begin(), source.extra_headers.end());
  // Headers of other libraries (vdpau/vdpau.h) come from the system's include directories.
  std::vector<std::string> dirs_to_search = options.include_dirs;
  dirs_to_search.insert(dirs_to_search.end(), {"/usr/local/include", "/usr/include"});
  for (const auto& h : headers) {
    const bool cuda_header = h.find('/') == std::string::npos;
    const auto& search = cuda_header ? options.include_dirs : dirs_to_search;
    const bool found =
        std::any_of(search.begin(), search.end(), [&](const std::string& dir) { return fs::exists(fs::path(dir) / h); });
    if (!found) {
      std::string dirs;
      for (const auto& d : search) dirs += (dirs.empty() ? "" : ", ") + d;
      throw std::runtime_error("header " + h + " (" + source.name + ") not found in " + dirs);
    }
  }
}

// `#define X Y` and `#define X PTDS(Y)`.
void apply_renames(const std::vector<RawMacro>& macros, const LibraryDescriptor& source, Library& lib) {
  std::set<std::string> functions;
  for (const auto& f : lib.functions) functions.insert(f.name);
  std::map<std::string, Rename> renames;
  for (const RawMacro& m : macros) {
    Rename r;
    r.public_name = m.name;
    if (m.tokens.size() == 1 && is_identifier(m.tokens[0])) {
      r.target = m.tokens[0];
    } else if (m.tokens.size() == 4 && m.tokens[1] == "(" && m.tokens[3] == ")" &&
               std::find(source.per_thread_macros.begin(), source.per_thread_macros.end(), m.tokens[0]) !=
                   source.per_thread_macros.end()) {
      r.target = m.tokens[2];
      r.per_thread = m.tokens[0].find("PTDS") != std::string::npos ? PerThread::Ptds : PerThread::Ptsz;
    } else {
      continue;
    }
    if (!functions.count(r.target)) continue;
    auto [it, inserted] = renames.emplace(r.public_name, r);
    if (!inserted && r.per_thread != PerThread::None) it->second = r;
  }
  for (const auto& [name, r] : renames) lib.renames.push_back(r);

  // A rename to the same name with a version suffix (cuCtxCreate_v4) gives the
  // function its public name; one to another public function (cuGraphInstantiate
  // -> cuGraphInstantiateWithFlags) makes an alias.
  static const std::regex versioned_re(R"((\w+?)_v\d+)");
  for (Function& f : lib.functions) {
    for (const auto& [name, r] : renames) {
      if (r.target != f.name) continue;
      std::smatch m;
      const bool versioned = std::regex_match(r.target, m, versioned_re) && m[1] == r.public_name;
      if (versioned) {
        f.abi_symbol = r.target;
        f.name = r.public_name;
        f.per_thread = r.per_thread;
      } else if (r.public_name == r.target) {
        f.per_thread = r.per_thread;
      } else {
        f.aliases.push_back(r.public_name);
      }
    }
  }
  // A header that declares the public name before its #define to a versioned
  // symbol (cufile.h: cuFileDriverClose, then cuFileDriverClose -> _v2) binds
  // the versioned one only.
  std::set<std::string> versioned_names;
  for (const Function& f : lib.functions) {
    if (f.abi_symbol != f.name) versioned_names.insert(f.name);
  }
  lib.functions.erase(std::remove_if(lib.functions.begin(), lib.functions.end(),
                                     [&](const Function& f) {
                                       return f.abi_symbol == f.name && versioned_names.count(f.name);
                                     }),
                      lib.functions.end());
}

// The ABI version to ask cuGetProcAddress for: the newest PFN_<name>_v<N>
// typedef whose parameter count matches the declaration. A function whose
// name carries its own version (cuCtxGetDevice_v2) is asked for by its base
// name: cudaTypedefs.h spells it PFN_cuCtxGetDevice_v13000. Where one base
// name has several declarations (cuGraphAddNode, #defined to cuGraphAddNode_v2,
// and cuGraphAddNode_v3, whose PFN typedefs have the same parameters), the
// newest declaration takes the newest typedef and each older one the newest
// typedef older than that of the next: asking with the newest version would
// hand the older declaration an ABI it was not written for.
void apply_pfn_versions(const AstResult& ast, Library& lib) {
  if (ast.pfn.empty()) return;
  static const std::regex versioned_re(R"((\w+?)_v(\d+))");
  const auto best_match = [&](const std::string& name, std::size_t params, int below) -> int {
    auto it = ast.pfn.find(name);
    if (it == ast.pfn.end()) return 0;
    int best = 0;
    for (const auto& [version, count] : it->second) {
      if (count == params && version < below) best = std::max(best, version);
    }
    return best;
  };
  // Each function's base name and declared version (1 for an unversioned name).
  struct Decl {
    Function* f;
    std::string base;
    int declared;
  };
  std::map<std::string, std::vector<Decl>> by_base;
  for (Function& f : lib.functions) {
    const std::string& spelled = f.abi_symbol.empty() ? f.name : f.abi_symbol;
    std::smatch m;
    Decl d{&f, spelled, 1};
    if (std::regex_match(spelled, m, versioned_re)) d = Decl{&f, m[1], std::stoi(m[2])};
    by_base[d.base].push_back(d);
  }
  for (auto& [base, decls] : by_base) {
    std::sort(decls.begin(), decls.end(), [](const Decl& a, const Decl& b) { return a.declared > b.declared; });
    int below = std::numeric_limits<int>::max();
    for (const Decl& d : decls) {
      Function& f = *d.f;
      f.proc_name = f.name;
      int version = best_match(f.name, f.params.size(), below);
      std::smatch m;
      if (version == 0 && std::regex_match(f.name, m, versioned_re)) {
        version = best_match(m[1], f.params.size(), below);
        if (version != 0) f.proc_name = m[1];
      }
      if (version == 0) {
        version = lib.cuda_version;
        lib.notes.push_back(f.name + ": no PFN typedef in cudaTypedefs.h with " + std::to_string(f.params.size()) +
                            " parameters; asking cuGetProcAddress for version " + std::to_string(version));
      } else if (decls.size() > 1) {
        below = version;
      }
      f.abi_version = version;
    }
  }
}

void evaluate_macros(const std::vector<RawMacro>& raw, const std::map<std::string, std::string>& docs,
                     const LibraryDescriptor& source, const FrontendOptions& options,
                     const clang::tooling::FileContentMappings& virtual_files, Library& lib) {
  std::set<std::string> functions;
  for (const auto& f : lib.functions) {
    functions.insert(f.name);
    functions.insert(f.abi_symbol);
  }
  Inputs in = make_inputs(source, options, virtual_files);
  std::vector<const RawMacro*> candidates;
  std::set<std::string> seen;
  for (const RawMacro& m : raw) {
    if (m.tokens.empty() || m.name.rfind("__", 0) == 0 || seen.count(m.name)) continue;
    if (m.tokens.size() == 1 && functions.count(m.tokens[0])) continue;  // a rename
    seen.insert(m.name);
    candidates.push_back(&m);
    in.main_code += "static const __typeof__(" + m.name + ") cubind_macro_" + m.name + " = (" + m.name + ");\n";
  }
  // Every library shares the toolkit's version, which cuda.h states.
  in.main_code +=
      "#if !defined(CUDA_VERSION) && __has_include(<cuda.h>)\n#include <cuda.h>\n#endif\n"
      "#ifdef CUDA_VERSION\nstatic const int cubind_macro___cuda_version = CUDA_VERSION;\n#endif\n";
  std::map<std::string, EvalResult> values;
  in.args.push_back("-fno-caret-diagnostics");  // also silences "N errors generated"
  run_clang(std::make_unique<EvalAction>(values), in, source.name + " macro values", false);
  if (auto it = values.find("__cuda_version"); it != values.end()) lib.cuda_version = static_cast<int>(it->second.int_value);
  // #define cudaStreamAttrID cudaLaunchAttributeID: another name for a type.
  std::set<std::string> type_names;
  for (const auto& t : lib.typedefs) type_names.insert(t.name);
  for (const auto& e : lib.enums) type_names.insert(e.name);
  for (const auto& r : lib.records) {
    if (!r.synthesized_name) type_names.insert(r.name);
  }
  unsigned order = 1u << 20;
  for (const RawMacro* m : candidates) {
    if (m->tokens.size() == 1 && type_names.count(m->tokens[0])) {
      lib.type_aliases[m->name] = m->tokens[0];
      continue;
    }
    auto it = values.find(m->name);
    if (it == values.end()) continue;  // not a constant (an attribute, a keyword, a type)
    Macro macro;
    macro.name = m->name;
    macro.order = order++;
    macro.spelling = join_tokens(m->tokens);
    macro.kind = it->second.kind;
    macro.int_value = it->second.int_value;
    macro.float_value = it->second.float_value;
    macro.string_value = it->second.string_value;
    macro.c_type = it->second.c_type;
    if (auto d = docs.find(m->name); d != docs.end()) macro.doc = d->second;
    lib.macros.push_back(std::move(macro));
  }
}

Library parse(const LibraryDescriptor& source, const FrontendOptions& options,
              const clang::tooling::FileContentMappings& virtual_files) {
  check_inputs(source, options, virtual_files);
  const std::set<std::string> owned_files(source.owned_files.begin(), source.owned_files.end());

  AstResult ast;
  static_cast<LibraryDescriptor&>(ast.library) = source;
  for (const auto& f : source.owned_files) {
    if (std::find(source.headers.begin(), source.headers.end(), f) == source.headers.end()) {
      ast.library.type_headers.push_back(f);
    }
  }
  const Inputs in = make_inputs(source, options, virtual_files);
  const std::set<std::string> foreign(source.foreign_types.begin(), source.foreign_types.end());
  run_clang(std::make_unique<AstAction>(owned_files, foreign, ast), in, source.name, true);

  std::vector<RawMacro> per_thread_macros;
  Inputs pt = in;
  pt.args.push_back("-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1");
  run_clang(std::make_unique<MacroOnlyAction>(owned_files, per_thread_macros), pt, source.name + " (per-thread)", true);

  Library lib = std::move(ast.library);
  apply_renames(per_thread_macros, source, lib);
  evaluate_macros(ast.macros, ast.macro_docs, source, options, virtual_files, lib);
  apply_pfn_versions(ast, lib);
  if (lib.functions.empty()) throw std::runtime_error(source.name + ": no function declarations found");
  return lib;
}

}  // namespace

Library parse_library(const LibraryDescriptor& source, const FrontendOptions& options) {
  return parse(source, options, {});
}

Library parse_snippet(const std::string& code, const std::string& file_name, const LibraryDescriptor& source,
                      const FrontendOptions& options) {
  return parse(source, options, {{std::string(kVirtualDir) + "/" + file_name, code}});
}

}  // namespace codegen
