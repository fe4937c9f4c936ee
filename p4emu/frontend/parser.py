"""Hand-written recursive-descent parser for P4_16 (the subset real v1model programs use).

Like p4c, the parser tracks which identifiers name types, which resolves the classic
ambiguities (``T x;`` declaration vs expression, ``(T) e`` cast vs parenthesised expression,
``f<T>(...)`` generic call vs comparison, ``T(...)`` instantiation vs call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from p4emu.exceptions import P4SourceError
from p4emu.frontend import ast
from p4emu.frontend.lexer import EOF, IDENT, INT, KEYWORDS, STRING, Token
from p4emu.frontend.source import SourceLocation

_T = TypeVar("_T")

# Keywords that may still be used as names (p4c's "nonTypeName").
NAME_KEYWORDS = frozenset({"apply", "state", "type", "key", "actions", "entries", "priority"})

TYPE_KEYWORDS = frozenset(
    {"bit", "int", "varbit", "bool", "string", "void", "error", "match_kind", "tuple"}
)

BINARY_PRECEDENCE = {
    "||": 2,
    "&&": 3,
    "==": 4,
    "!=": 4,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "<<": 9,
    ">>": 9,
    "++": 10,
    "+": 11,
    "-": 11,
    "|+|": 11,
    "|-|": 11,
    "*": 12,
    "/": 12,
    "%": 12,
}

UNSUPPORTED_KEYWORDS = {
    "for": "for loops",
    "break": "break statements",
    "continue": "continue statements",
    "this": "'this' in abstract extern methods",
    "list": "list types",
}


class _Backtrack(Exception):
    """Internal: a speculative parse failed."""


def describe_token(token: Token) -> str:
    if token.kind == EOF:
        return "end of file"
    return f"'{token.text}'"


class Parser:
    """Parses a preprocessed token list into an :class:`ast.Program`."""

    def __init__(self, tokens: list[Token]) -> None:
        if not tokens or tokens[-1].kind != EOF:
            raise ValueError("token list must end with EOF")
        self.tokens = tokens
        self.pos = 0
        self.global_types: set[str] = set()
        self.type_scopes: list[set[str]] = []
        self._speculating = 0

    # ------------------------------------------------------------------ token helpers

    def peek(self, offset: int = 0) -> Token:
        index = min(self.pos + offset, len(self.tokens) - 1)
        return self.tokens[index]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != EOF:
            self.pos += 1
        return token

    def at(self, *kinds: str) -> bool:
        return self.peek().kind in kinds

    def accept(self, kind: str) -> Token | None:
        if self.peek().kind == kind:
            return self.next()
        return None

    def error(self, token: Token, message: str) -> P4SourceError:
        if self._speculating:
            return _Backtrack()  # type: ignore[return-value]
        return token.loc.error(message)

    def syntax_error(self, expected: str, token: Token | None = None) -> P4SourceError:
        token = token or self.peek()
        return self.error(
            token, f"syntax error: expected {expected}, found {describe_token(token)}"
        )

    def expect(self, kind: str, what: str | None = None) -> Token:
        token = self.peek()
        if token.kind != kind:
            raise self.syntax_error(what or f"'{kind}'", token)
        return self.next()

    def speculate(self, function: Callable[[], _T]) -> _T | None:
        """Run ``function``; on failure restore the position and return None."""
        saved = self.pos
        self._speculating += 1
        try:
            return function()
        except (_Backtrack, P4SourceError):
            self.pos = saved
            return None
        finally:
            self._speculating -= 1

    # ------------------------------------------------------------------ names & type names

    def is_type_name(self, name: str) -> bool:
        if name in self.global_types:
            return True
        return any(name in scope for scope in self.type_scopes)

    def declare_type(self, name: str) -> None:
        if self.type_scopes:
            self.type_scopes[-1].add(name)
        else:
            self.global_types.add(name)

    def is_name_token(self, token: Token) -> bool:
        return token.kind == IDENT or token.kind in NAME_KEYWORDS

    def parse_name(self, what: str = "a name") -> Token:
        token = self.peek()
        if self.is_name_token(token):
            return self.next()
        if token.kind in UNSUPPORTED_KEYWORDS:
            raise token.loc.unsupported(UNSUPPORTED_KEYWORDS[token.kind])
        raise self.syntax_error(what, token)

    def parse_member_name(self) -> Token:
        """After '.', any word (even a keyword) is a member name."""
        token = self.peek()
        if token.kind == IDENT or token.kind in KEYWORDS:
            return self.next()
        raise self.syntax_error("a member name", token)

    def push_type_scope(self, names: list[ast.TypeParam]) -> None:
        self.type_scopes.append({param.name for param in names})

    def pop_type_scope(self) -> None:
        self.type_scopes.pop()

    # ------------------------------------------------------------------ program

    def parse_program(self) -> ast.Program:
        start = self.peek().loc
        declarations: list[ast.Declaration] = []
        while not self.at(EOF):
            if self.accept(";"):
                continue
            declarations.append(self.parse_top_declaration())
        return ast.Program(declarations, loc=start)

    def parse_top_declaration(self) -> ast.Declaration:
        annotations = self.parse_annotations()
        token = self.peek()
        kind = token.kind
        if kind == "const":
            decl: ast.Declaration = self.parse_const()
        elif kind == "header":
            decl = self.parse_struct_like(ast.HeaderDecl)
        elif kind == "header_union":
            decl = self.parse_struct_like(ast.HeaderUnionDecl)
        elif kind == "struct":
            decl = self.parse_struct_like(ast.StructDecl)
        elif kind == "enum":
            decl = self.parse_enum()
        elif kind == "error":
            decl = self.parse_id_list_decl(ast.ErrorDecl, "error")
        elif kind == "match_kind":
            decl = self.parse_id_list_decl(ast.MatchKindDecl, "match_kind")
        elif kind == "typedef":
            decl = self.parse_typedef()
        elif kind == "type":
            decl = self.parse_newtype()
        elif kind == "extern":
            decl = self.parse_extern()
        elif kind == "action":
            decl = self.parse_action()
        elif kind == "parser":
            decl = self.parse_parser()
        elif kind == "control":
            decl = self.parse_control()
        elif kind == "package":
            decl = self.parse_package()
        elif kind == "value_set":
            raise token.loc.unsupported("value_set outside a parser")
        elif kind == "table":
            raise self.error(token, "a table must be declared inside a control")
        elif kind in UNSUPPORTED_KEYWORDS:
            raise token.loc.unsupported(UNSUPPORTED_KEYWORDS[kind])
        elif self.starts_type(token) or token.text in self._function_type_params():
            decl = self.parse_function_or_instantiation()
        else:
            raise self.syntax_error("a declaration", token)
        decl.annotations = annotations + decl.annotations
        return decl

    def starts_type(self, token: Token) -> bool:
        if token.kind in TYPE_KEYWORDS:
            return True
        if token.kind == "." and self.peek(1).kind == IDENT:
            return self.is_type_name(self.peek(1).text)
        return token.kind == IDENT and self.is_type_name(token.text)

    # ------------------------------------------------------------------ annotations

    def parse_annotations(self) -> list[ast.Annotation]:
        annotations: list[ast.Annotation] = []
        while self.at("@"):
            annotations.append(self.parse_annotation())
        return annotations

    def parse_annotation(self) -> ast.Annotation:
        at = self.next()
        name_token = self.peek()
        if not (name_token.kind == IDENT or name_token.kind in KEYWORDS):
            raise self.syntax_error("an annotation name after '@'", name_token)
        self.next()
        annotation = ast.Annotation(name_token.text, loc=at.loc)
        if self.at("(") and not self._annotation_paren_is_code(name_token.text):
            body = self.collect_balanced("(", ")")
            annotation.body = _tokens_text(body)
            annotation.args = self._parse_annotation_args(body)
        elif self.at("["):
            body = self.collect_balanced("[", "]")
            annotation.body = _tokens_text(body)
            annotation.kv = self._parse_annotation_kv(body)
            if annotation.kv is None:
                annotation.args = self._parse_annotation_args(body)
        return annotation

    @staticmethod
    def _annotation_paren_is_code(name: str) -> bool:
        # No standard annotation is followed by a parenthesised declaration, so '(' always
        # starts a body.
        return False

    def collect_balanced(self, open_kind: str, close_kind: str) -> list[Token]:
        start = self.expect(open_kind)
        depth = 1
        body: list[Token] = []
        while True:
            token = self.next()
            if token.kind == EOF:
                raise self.error(start, f"unterminated '{open_kind}' in annotation")
            if token.kind == open_kind:
                depth += 1
            elif token.kind == close_kind:
                depth -= 1
                if depth == 0:
                    return body
            body.append(token)

    def _sub_parser(self, tokens: list[Token]) -> Parser:
        end = tokens[-1].loc if tokens else self.peek().loc
        sub = Parser([*tokens, Token(EOF, "", end)])
        sub.global_types = self.global_types
        sub.type_scopes = [set(scope) for scope in self.type_scopes]
        return sub

    def _parse_annotation_args(self, tokens: list[Token]) -> list[ast.Expr] | None:
        if not tokens:
            return []
        sub = self._sub_parser(tokens)

        def parse() -> list[ast.Expr]:
            values = [sub.parse_expression()]
            while sub.accept(","):
                values.append(sub.parse_expression())
            if not sub.at(EOF):
                raise _Backtrack()
            return values

        return sub.speculate(parse)

    def _parse_annotation_kv(self, tokens: list[Token]) -> dict[str, ast.Expr] | None:
        sub = self._sub_parser(tokens)

        def parse() -> dict[str, ast.Expr]:
            pairs: dict[str, ast.Expr] = {}
            while not sub.at(EOF):
                key = sub.parse_member_name()
                sub.expect("=")
                pairs[key.text] = sub.parse_expression()
                if not sub.accept(","):
                    break
            if not sub.at(EOF):
                raise _Backtrack()
            return pairs

        return sub.speculate(parse)

    # ------------------------------------------------------------------ types

    def parse_type(self) -> ast.TypeRef:
        token = self.peek()
        base = self.parse_base_type()
        while self.at("["):
            open_token = self.next()
            size = self.parse_expression()
            self.expect("]")
            base = ast.StackTypeRef(base, size, loc=open_token.loc)
        del token
        return base

    def parse_base_type(self) -> ast.TypeRef:
        token = self.peek()
        kind = token.kind
        if kind in ("bit", "int"):
            self.next()
            signed = kind == "int"
            if self.at("<"):
                self.next()
                width = self.parse_width()
                self.expect_type_close()
                return ast.BitTypeRef(signed, width, loc=token.loc)
            if signed:
                return ast.InfIntTypeRef(loc=token.loc)
            return ast.BitTypeRef(False, None, loc=token.loc)
        if kind == "varbit":
            self.next()
            self.expect("<")
            width = self.parse_width()
            self.expect_type_close()
            return ast.VarbitTypeRef(width, loc=token.loc)
        if kind == "bool":
            self.next()
            return ast.BoolTypeRef(loc=token.loc)
        if kind == "string":
            self.next()
            return ast.StringTypeRef(loc=token.loc)
        if kind == "void":
            self.next()
            return ast.VoidTypeRef(loc=token.loc)
        if kind == "error":
            self.next()
            return ast.ErrorTypeRef(loc=token.loc)
        if kind == "match_kind":
            self.next()
            return ast.MatchKindTypeRef(loc=token.loc)
        if kind == "tuple":
            self.next()
            self.expect("<")
            elements = [self.parse_type()]
            while self.accept(","):
                elements.append(self.parse_type())
            self.expect_type_close()
            return ast.TupleTypeRef(elements, loc=token.loc)
        if kind in UNSUPPORTED_KEYWORDS:
            raise token.loc.unsupported(UNSUPPORTED_KEYWORDS[kind])
        absolute = False
        if kind == ".":
            self.next()
            absolute = True
            token = self.peek()
        if token.kind == IDENT:
            self.next()
            if token.text == "_" and not absolute:
                return ast.DontCareTypeRef(loc=token.loc)
            type_args: list[ast.TypeRef] = []
            if self.at("<"):
                type_args = self.parse_type_args()
            return ast.NamedTypeRef(token.text, type_args, absolute, loc=token.loc)
        raise self.syntax_error("a type", token)

    def expect_type_close(self) -> None:
        self.expect(">", "'>'")

    def parse_type_args(self) -> list[ast.TypeRef]:
        self.expect("<")
        args = [self.parse_type_arg()]
        while self.accept(","):
            args.append(self.parse_type_arg())
        self.expect_type_close()
        return args

    def parse_type_arg(self) -> ast.TypeRef:
        token = self.peek()
        if token.kind == INT:
            raise token.loc.unsupported("integer literals as type arguments")
        return self.parse_type()

    def parse_width(self) -> ast.Expr:
        token = self.peek()
        if token.kind == INT:
            return self.parse_primary()
        if token.kind == IDENT:
            self.next()
            return ast.PathExpr(token.text, loc=token.loc)
        if token.kind == "(":
            self.next()
            expr = self.parse_expression()
            self.expect(")")
            return expr
        raise self.syntax_error("a width (integer, constant name or parenthesised expression)")

    def parse_type_params(self) -> list[ast.TypeParam]:
        if not self.at("<"):
            return []
        self.next()
        params: list[ast.TypeParam] = []
        while True:
            name = self.parse_name("a type parameter name")
            params.append(ast.TypeParam(name.text, loc=name.loc))
            if not self.accept(","):
                break
        self.expect(">")
        return params

    # ------------------------------------------------------------------ type declarations

    def parse_struct_like(
        self, cls: type[ast.HeaderDecl | ast.HeaderUnionDecl | ast.StructDecl]
    ) -> ast.Declaration:
        keyword = self.next()
        name = self.parse_name(f"a {keyword.text} name")
        self.declare_type(name.text)
        if self.at("<"):
            raise self.peek().loc.unsupported(f"generic {keyword.text} types")
        self.expect("{")
        fields: list[ast.StructField] = []
        while not self.accept("}"):
            annotations = self.parse_annotations()
            type_ref = self.parse_type()
            field_name = self.parse_name("a field name")
            self.expect(";")
            fields.append(
                ast.StructField(
                    field_name.text, type_ref, annotations=annotations, loc=field_name.loc
                )
            )
        return cls(name.text, fields, loc=name.loc)

    def parse_enum(self) -> ast.EnumDecl:
        self.next()
        underlying: ast.TypeRef | None = None
        if self.peek(1).kind != "{":
            underlying = self.parse_type()
        name = self.parse_name("an enum name")
        self.declare_type(name.text)
        self.expect("{")
        members: list[ast.EnumMemberDecl] = []
        while not self.at("}"):
            self.parse_annotations()
            member = self.parse_name("an enum member name")
            value: ast.Expr | None = None
            if self.accept("="):
                value = self.parse_expression()
            members.append(ast.EnumMemberDecl(member.text, value, loc=member.loc))
            if not self.accept(","):
                break
        self.expect("}")
        return ast.EnumDecl(name.text, underlying, members, loc=name.loc)

    def parse_id_list_decl(
        self, cls: type[ast.ErrorDecl | ast.MatchKindDecl], name: str
    ) -> ast.Declaration:
        keyword = self.next()
        self.expect("{")
        members: list[ast.Identifier] = []
        while not self.at("}"):
            member = self.parse_name(f"a {name} member")
            members.append(ast.Identifier(member.text, loc=member.loc))
            if not self.accept(","):
                break
        self.expect("}")
        return cls(name, members, loc=keyword.loc)

    def parse_typedef(self) -> ast.TypedefDecl:
        self.next()
        if self.at("header", "struct", "header_union", "enum"):
            raise self.peek().loc.unsupported("typedef of an inline type declaration")
        type_ref = self.parse_type()
        name = self.parse_name("a typedef name")
        self.expect(";")
        self.declare_type(name.text)
        return ast.TypedefDecl(name.text, type_ref, loc=name.loc)

    def parse_newtype(self) -> ast.NewTypeDecl:
        self.next()
        type_ref = self.parse_type()
        name = self.parse_name("a type name")
        self.expect(";")
        self.declare_type(name.text)
        return ast.NewTypeDecl(name.text, type_ref, loc=name.loc)

    def parse_const(self) -> ast.ConstDecl:
        self.expect("const")
        type_ref = self.parse_type()
        name = self.parse_name("a constant name")
        self.expect("=", "'=' (constants need an initializer)")
        value = self.parse_expression()
        self.expect(";")
        return ast.ConstDecl(name.text, type_ref, value, loc=name.loc)

    # ------------------------------------------------------------------ parameters

    def parse_parameters(self) -> list[ast.Parameter]:
        self.expect("(")
        params: list[ast.Parameter] = []
        if self.accept(")"):
            return params
        while True:
            annotations = self.parse_annotations()
            direction = ""
            if self.at("in", "out", "inout"):
                direction = self.next().kind
            type_ref = self.parse_type()
            name = self.parse_name("a parameter name")
            default: ast.Expr | None = None
            if self.accept("="):
                default = self.parse_expression()
            params.append(
                ast.Parameter(
                    name.text, direction, type_ref, default, annotations=annotations, loc=name.loc
                )
            )
            if not self.accept(","):
                break
        self.expect(")", "',' or ')'")
        return params

    # ------------------------------------------------------------------ externs

    def parse_extern(self) -> ast.Declaration:
        keyword = self.next()
        token = self.peek()
        # extern object:  extern Name<T> { ... }   /   extern Name;
        if (
            token.kind == IDENT
            and self.peek(1).kind in ("{", "<", ";")
            and (self.peek(1).kind != "<" or self._generic_extern_object_follows())
        ):
            return self.parse_extern_object()
        del keyword
        annotations = self.parse_annotations()
        return_type = self.parse_type_or_void()
        name = self.parse_name("an extern function name")
        type_params = self.parse_type_params()
        self.push_type_scope(type_params)
        try:
            params = self.parse_parameters()
        finally:
            self.pop_type_scope()
        self.expect(";")
        return ast.ExternFunctionDecl(
            name.text, return_type, type_params, params, annotations=annotations, loc=name.loc
        )

    def _generic_extern_object_follows(self) -> bool:
        # extern Name<T, U> {  vs  extern T name<...>(  (return type is a generic instance)
        depth = 0
        offset = 1
        while True:
            token = self.peek(offset)
            if token.kind == EOF:
                return False
            if token.kind == "<":
                depth += 1
            elif token.kind == ">":
                depth -= 1
                if depth == 0:
                    return self.peek(offset + 1).kind == "{"
            offset += 1

    def parse_type_or_void(self) -> ast.TypeRef:
        return self.parse_type()

    def parse_extern_object(self) -> ast.ExternDecl:
        name = self.next()
        self.declare_type(name.text)
        type_params = self.parse_type_params()
        if self.accept(";"):
            raise name.loc.unsupported("forward declaration of an extern object")
        self.push_type_scope(type_params)
        try:
            self.expect("{")
            methods: list[ast.MethodDecl] = []
            while not self.accept("}"):
                methods.append(self.parse_extern_method(name.text))
        finally:
            self.pop_type_scope()
        return ast.ExternDecl(name.text, type_params, methods, loc=name.loc)

    def parse_extern_method(self, extern_name: str) -> ast.MethodDecl:
        annotations = self.parse_annotations()
        is_abstract = False
        if self.at("abstract"):
            raise self.peek().loc.unsupported("abstract extern methods")
        token = self.peek()
        if token.kind == IDENT and token.text == extern_name and self.peek(1).kind == "(":
            self.next()
            params = self.parse_parameters()
            self.expect(";")
            return ast.MethodDecl(
                token.text, None, [], params, True, annotations=annotations, loc=token.loc
            )
        return_type = self.parse_type()
        name = self.parse_name("a method name")
        type_params = self.parse_type_params()
        self.push_type_scope(type_params)
        try:
            params = self.parse_parameters()
        finally:
            self.pop_type_scope()
        self.expect(";")
        return ast.MethodDecl(
            name.text,
            return_type,
            type_params,
            params,
            False,
            is_abstract,
            annotations=annotations,
            loc=name.loc,
        )

    # ------------------------------------------------------------------ package

    def parse_package(self) -> ast.PackageTypeDecl:
        self.next()
        name = self.parse_name("a package name")
        self.declare_type(name.text)
        type_params = self.parse_type_params()
        self.push_type_scope(type_params)
        try:
            params = self.parse_parameters()
        finally:
            self.pop_type_scope()
        self.expect(";")
        return ast.PackageTypeDecl(name.text, type_params, params, loc=name.loc)

    # ------------------------------------------------------------------ functions / instances

    def _function_type_params(self) -> set[str]:
        """The type parameter names of ``R name<A, B>(`` ahead (R may be one of them, as in
        ``T f<T>(in T x)``), else an empty set."""
        if not (self.is_name_token(self.peek(1)) and self.peek(2).kind == "<"):
            return set()
        names: set[str] = set()
        offset = 3
        while self.peek(offset).kind == IDENT:
            names.add(self.peek(offset).text)
            if self.peek(offset + 1).kind == ">":
                return names if self.peek(offset + 2).kind == "(" else set()
            if self.peek(offset + 1).kind != ",":
                break
            offset += 2
        return set()

    def parse_function_or_instantiation(self) -> ast.Declaration:
        start = self.peek()
        self.type_scopes.append(self._function_type_params())
        try:
            type_ref = self.parse_type()
        finally:
            self.pop_type_scope()
        if self.at("("):
            return self.parse_instantiation_rest(type_ref, start)
        name = self.parse_name("a name")
        if self.at("(", "<"):
            type_params = self.parse_type_params()
            self.push_type_scope(type_params)
            try:
                params = self.parse_parameters()
                body = self.parse_block()
            finally:
                self.pop_type_scope()
            return ast.FunctionDecl(name.text, type_ref, type_params, params, body, loc=name.loc)
        if self.at("=", ";"):
            raise self.error(name, "variables cannot be declared at the top level; use 'const'")
        raise self.syntax_error("'(' (a function or instantiation)")

    def parse_instantiation_rest(self, type_ref: ast.TypeRef, start: Token) -> ast.Instantiation:
        args = self.parse_arguments()
        name = self.parse_name("an instance name")
        if self.at("{"):
            raise self.peek().loc.unsupported(
                "instantiation with an initializer block (abstract methods)"
            )
        self.expect(";")
        del start
        return ast.Instantiation(name.text, type_ref, args, loc=name.loc)

    def parse_arguments(self) -> list[ast.Argument]:
        self.expect("(")
        args: list[ast.Argument] = []
        if self.accept(")"):
            return args
        while True:
            token = self.peek()
            name: str | None = None
            if self.is_name_token(token) and self.peek(1).kind == "=" and self.peek(2).kind != "=":
                name = self.next().text
                self.next()
            value = self.parse_expression()
            args.append(ast.Argument(value, name, loc=token.loc))
            if not self.accept(","):
                break
        self.expect(")", "',' or ')'")
        return args

    # ------------------------------------------------------------------ actions

    def parse_action(self) -> ast.ActionDecl:
        self.next()
        name = self.parse_name("an action name")
        params = self.parse_parameters()
        body = self.parse_block()
        return ast.ActionDecl(name.text, params, body, loc=name.loc)

    # ------------------------------------------------------------------ parsers

    def parse_parser(self) -> ast.Declaration:
        self.next()
        name = self.parse_name("a parser name")
        self.declare_type(name.text)
        type_params = self.parse_type_params()
        self.push_type_scope(type_params)
        try:
            params = self.parse_parameters()
            if self.accept(";"):
                return ast.ParserTypeDecl(name.text, type_params, params, loc=name.loc)
            ctor_params = self.parse_parameters() if self.at("(") else []
            self.expect("{")
            locals_: list[ast.Declaration] = []
            states: list[ast.ParserState] = []
            while not self.accept("}"):
                annotations = self.parse_annotations()
                if self.at("state"):
                    state = self.parse_state()
                    state.annotations = annotations + state.annotations
                    states.append(state)
                    continue
                local = self.parse_parser_local()
                local.annotations = annotations + local.annotations
                locals_.append(local)
        finally:
            self.pop_type_scope()
        return ast.ParserDecl(
            name.text, type_params, params, ctor_params, locals_, states, loc=name.loc
        )

    def parse_parser_local(self) -> ast.Declaration:
        token = self.peek()
        if token.kind == "const":
            return self.parse_const()
        if token.kind == "value_set":
            return self.parse_value_set()
        if self.starts_type(token) or (
            token.kind == IDENT and self.peek(1).kind in ("(", "<", IDENT)
        ):
            return self.parse_local_variable_or_instance()
        raise self.syntax_error("a parser state or local declaration", token)

    def parse_value_set(self) -> ast.ValueSetDecl:
        keyword = self.next()
        self.expect("<")
        element = self.parse_type()
        self.expect_type_close()
        self.expect("(")
        size = self.parse_expression()
        self.expect(")")
        name = self.parse_name("a value_set name")
        self.expect(";")
        del keyword
        return ast.ValueSetDecl(name.text, element, size, loc=name.loc)

    def parse_local_variable_or_instance(self) -> ast.Declaration:
        start = self.peek()
        type_ref = self.parse_type()
        if self.at("("):
            return self.parse_instantiation_rest(type_ref, start)
        name = self.parse_name("a variable name")
        init: ast.Expr | None = None
        if self.accept("="):
            init = self.parse_expression()
        self.expect(";")
        return ast.VariableDecl(name.text, type_ref, init, loc=name.loc)

    def parse_state(self) -> ast.ParserState:
        self.next()
        name = self.parse_name("a state name")
        self.expect("{")
        statements: list[ast.Statement] = []
        transition: ast.Transition | None = None
        while not self.accept("}"):
            if self.at("transition"):
                transition = self.parse_transition()
                if not self.at("}"):
                    raise self.syntax_error("'}' after the transition statement")
                continue
            statements.append(self.parse_statement(in_parser=True))
        return ast.ParserState(name.text, statements, transition, loc=name.loc)

    def parse_transition(self) -> ast.Transition:
        keyword = self.next()
        if self.at("select"):
            self.next()
            self.expect("(")
            exprs = [self.parse_expression()]
            while self.accept(","):
                exprs.append(self.parse_expression())
            self.expect(")")
            self.expect("{")
            cases: list[ast.SelectCase] = []
            while not self.accept("}"):
                self.parse_annotations()
                keyset = self.parse_keyset()
                self.expect(":")
                state = self.parse_name("a state name")
                self.expect(";")
                cases.append(ast.SelectCase(keyset, state.text, loc=keyset.loc))
            self.accept(";")
            return ast.Transition(None, exprs, cases, loc=keyword.loc)
        state = self.parse_name("a state name or 'select'")
        self.expect(";")
        return ast.Transition(state.text, loc=keyword.loc)

    def parse_keyset(self) -> ast.Expr:
        token = self.peek()
        if token.kind == "(":
            # Tuple keyset "(a, b)" vs parenthesised expression "(a)".
            saved = self.pos
            self.next()
            elements = [self.parse_simple_keyset()]
            if self.at(","):
                while self.accept(","):
                    elements.append(self.parse_simple_keyset())
                self.expect(")")
                return ast.TupleKeyset(elements, loc=token.loc)
            reduced = (ast.Mask, ast.Range, ast.DefaultExpr, ast.DontCare)
            if isinstance(elements[0], reduced) and self.accept(")"):
                # p4c's grammar: "(" reducedSimpleKeysetExpression ")", e.g. "(v &&& m)"
                return elements[0]
            self.pos = saved
        return self.parse_simple_keyset()

    def parse_simple_keyset(self) -> ast.Expr:
        token = self.peek()
        if token.kind == "default":
            self.next()
            return ast.DefaultExpr(loc=token.loc)
        if token.kind == IDENT and token.text == "_" and self.peek(1).kind in (",", ")", ":"):
            self.next()
            return ast.DontCare(loc=token.loc)
        value = self.parse_expression()
        if self.accept("&&&"):
            mask = self.parse_expression()
            return ast.Mask(value, mask, loc=value.loc)
        if self.accept(".."):
            high = self.parse_expression()
            return ast.Range(value, high, loc=value.loc)
        return value

    # ------------------------------------------------------------------ controls

    def parse_control(self) -> ast.Declaration:
        self.next()
        name = self.parse_name("a control name")
        self.declare_type(name.text)
        type_params = self.parse_type_params()
        self.push_type_scope(type_params)
        try:
            params = self.parse_parameters()
            if self.accept(";"):
                return ast.ControlTypeDecl(name.text, type_params, params, loc=name.loc)
            ctor_params = self.parse_parameters() if self.at("(") else []
            self.expect("{")
            locals_: list[ast.Declaration] = []
            body: ast.BlockStmt | None = None
            while not self.accept("}"):
                annotations = self.parse_annotations()
                token = self.peek()
                if token.kind == "apply":
                    if body is not None:
                        raise self.error(token, "a control has only one apply block")
                    self.next()
                    body = self.parse_block()
                    body.annotations = annotations
                    continue
                if body is not None:
                    raise self.syntax_error("'}' (the apply block must come last)", token)
                local = self.parse_control_local()
                local.annotations = annotations + local.annotations
                locals_.append(local)
            if body is None:
                raise self.error(
                    self.tokens[self.pos - 1], f"control {name.text} has no apply block"
                )
        finally:
            self.pop_type_scope()
        return ast.ControlDecl(
            name.text, type_params, params, ctor_params, locals_, body, loc=name.loc
        )

    def parse_control_local(self) -> ast.Declaration:
        token = self.peek()
        if token.kind == "action":
            return self.parse_action()
        if token.kind == "table":
            return self.parse_table()
        if token.kind == "const":
            return self.parse_const()
        if token.kind == "value_set":
            raise token.loc.unsupported("value_set in a control")
        if self.starts_type(token) or (
            token.kind == IDENT and self.peek(1).kind in ("(", "<", IDENT)
        ):
            return self.parse_local_variable_or_instance()
        raise self.syntax_error("an action, table, instance, variable or 'apply'", token)

    # ------------------------------------------------------------------ tables

    def parse_table(self) -> ast.TableDecl:
        self.next()
        name = self.parse_name("a table name")
        self.expect("{")
        properties: list[ast.TableProperty] = []
        while not self.accept("}"):
            properties.append(self.parse_table_property())
        return ast.TableDecl(name.text, properties, loc=name.loc)

    def parse_table_property(self) -> ast.TableProperty:
        annotations = self.parse_annotations()
        is_const = bool(self.accept("const"))
        name = self.parse_name("a table property name")
        self.expect("=")
        prop = name.text
        if prop == "key":
            value: object = self.parse_key_elements()
        elif prop == "actions":
            value = self.parse_action_list()
        elif prop == "entries":
            value = self.parse_entries(is_const)
        elif prop == "default_action":
            expr = self.parse_expression()
            self.expect(";")
            value = self.action_ref_from_expr(expr)
        else:
            value = self.parse_expression()
            self.expect(";")
        return ast.TableProperty(prop, value, is_const, annotations=annotations, loc=name.loc)

    def parse_key_elements(self) -> list[ast.KeyElement]:
        self.expect("{")
        elements: list[ast.KeyElement] = []
        while not self.accept("}"):
            expr = self.parse_expression()
            self.expect(":")
            match_kind = self.parse_name("a match kind")
            annotations = self.parse_annotations()
            self.expect(";")
            elements.append(
                ast.KeyElement(expr, match_kind.text, annotations=annotations, loc=expr.loc)
            )
        self.accept(";")
        return elements

    def parse_action_list(self) -> list[ast.ActionRef]:
        self.expect("{")
        refs: list[ast.ActionRef] = []
        while not self.accept("}"):
            annotations = self.parse_annotations()
            ref = self.parse_action_ref()
            ref.annotations = annotations
            refs.append(ref)
            if not self.at("}"):
                self.expect(";")
        self.accept(";")
        return refs

    def parse_action_ref(self) -> ast.ActionRef:
        absolute = bool(self.accept("."))
        name = self.parse_name("an action name")
        args: list[ast.Argument] | None = None
        if self.at("("):
            args = self.parse_arguments()
        return ast.ActionRef(("." if absolute else "") + name.text, args, loc=name.loc)

    def action_ref_from_expr(self, expr: ast.Expr) -> ast.ActionRef:
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.callee, ast.PathExpr)
            and not expr.type_args
        ):
            prefix = "." if expr.callee.absolute else ""
            return ast.ActionRef(prefix + expr.callee.name, expr.args, loc=expr.callee.loc)
        if isinstance(expr, ast.PathExpr):
            return ast.ActionRef(("." if expr.absolute else "") + expr.name, None, loc=expr.loc)
        raise self.error(
            _first_token_of(expr, self),
            "default_action must be an action call such as 'NoAction()'",
        )

    def parse_entries(self, is_const: bool) -> list[ast.TableEntry]:
        self.expect("{")
        entries: list[ast.TableEntry] = []
        while not self.accept("}"):
            if self.at("@"):
                # P4_16 v1.2.4 (and p4c): KEYSET : ACTION ANNOTATIONS; nothing before the keyset
                raise self.error(
                    self.peek(),
                    "annotations of a table entry go after its action ('KEY : ACTION() @x;')",
                )
            start = self.peek()
            if start.kind == "const":
                self.next()
                start = self.peek()
            priority: ast.Expr | None = None
            if start.kind == IDENT and start.text == "priority" and self.peek(1).kind == "=":
                self.next()
                self.next()
                priority = self.parse_expression()
                self.expect(":")
            keyset_expr = self.parse_keyset()
            keyset = (
                keyset_expr.elements if isinstance(keyset_expr, ast.TupleKeyset) else [keyset_expr]
            )
            self.expect(":")
            action = self.parse_action_ref()
            annotations = self.parse_annotations()
            self.expect(";")
            entries.append(
                ast.TableEntry(
                    keyset, action, priority, annotations=annotations, loc=keyset_expr.loc
                )
            )
        self.accept(";")
        return entries

    # ------------------------------------------------------------------ statements

    def parse_block(self) -> ast.BlockStmt:
        start = self.expect("{")
        statements: list[ast.Statement] = []
        while not self.accept("}"):
            if self.at(EOF):
                raise self.syntax_error("'}'")
            statements.append(self.parse_statement())
        return ast.BlockStmt(statements, loc=start.loc)

    def parse_statement(self, in_parser: bool = False) -> ast.Statement:
        annotations = self.parse_annotations()
        statement = self._parse_statement_body(in_parser)
        statement.annotations = annotations + statement.annotations
        return statement

    def _parse_statement_body(self, in_parser: bool) -> ast.Statement:
        token = self.peek()
        kind = token.kind
        if kind == "{":
            return self.parse_block()
        if kind == ";":
            self.next()
            return ast.EmptyStmt(loc=token.loc)
        if kind == "if":
            return self.parse_if()
        if kind == "switch":
            return self.parse_switch()
        if kind == "return":
            self.next()
            value = None if self.at(";") else self.parse_expression()
            self.expect(";")
            return ast.ReturnStmt(value, loc=token.loc)
        if kind == "exit":
            self.next()
            self.expect(";")
            return ast.ExitStmt(loc=token.loc)
        if kind == "const":
            decl = self.parse_const()
            return ast.DeclStmt(decl, loc=decl.loc)
        if kind in UNSUPPORTED_KEYWORDS:
            raise token.loc.unsupported(UNSUPPORTED_KEYWORDS[kind])
        if kind == "transition":
            raise self.error(
                token, "transition statements are only allowed at the end of a parser state"
            )
        if kind in ("action", "table"):
            raise self.error(token, f"{kind} declarations are not allowed inside a block")
        if self.is_declaration_start():
            type_ref = self.parse_type()
            if self.at("("):
                raise self.error(
                    self.peek(),
                    "instantiations are not allowed inside a block; declare the instance before 'apply'",
                )
            name = self.parse_name("a variable name")
            init: ast.Expr | None = None
            if self.accept("="):
                init = self.parse_expression()
            self.expect(";")
            variable = ast.VariableDecl(name.text, type_ref, init, loc=name.loc)
            return ast.DeclStmt(variable, loc=name.loc)
        expr = self.parse_expression()
        if self.at("="):
            self.next()
            rhs = self.parse_expression()
            self.expect(";")
            return ast.AssignStmt(expr, rhs, loc=expr.loc)
        if isinstance(expr, ast.Call):
            self.expect(";")
            return ast.CallStmt(expr, loc=expr.loc)
        raise self.syntax_error("'=' or a method call")

    def is_declaration_start(self) -> bool:
        token = self.peek()
        if token.kind in ("bit", "int", "varbit", "bool", "string", "tuple"):
            return True
        if token.kind == "error":
            return self.peek(1).kind == IDENT
        if token.kind == IDENT and self.is_type_name(token.text):
            return self.peek(1).kind in (IDENT, "<", "[") or self.peek(1).kind in NAME_KEYWORDS
        # An unknown type name followed by a name: a declaration (the checker reports the type).
        return token.kind == IDENT and self.peek(1).kind == IDENT

    def parse_if(self) -> ast.IfStmt:
        keyword = self.next()
        self.expect("(")
        cond = self.parse_expression()
        self.expect(")")
        then = self.parse_statement()
        otherwise: ast.Statement | None = None
        if self.accept("else"):
            otherwise = self.parse_statement()
        return ast.IfStmt(cond, then, otherwise, loc=keyword.loc)

    def parse_switch(self) -> ast.SwitchStmt:
        keyword = self.next()
        self.expect("(")
        expr = self.parse_expression()
        self.expect(")")
        self.expect("{")
        cases: list[ast.SwitchCase] = []
        while not self.accept("}"):
            token = self.peek()
            label: ast.Expr | None
            if token.kind == "default":
                self.next()
                label = None
            else:
                label = self.parse_expression()
            self.expect(":")
            body = self.parse_block() if self.at("{") else None
            cases.append(ast.SwitchCase(label, body, loc=token.loc))
        return ast.SwitchStmt(expr, cases, loc=keyword.loc)

    # ------------------------------------------------------------------ expressions

    def parse_expression(self) -> ast.Expr:
        return self.parse_ternary()

    def parse_ternary(self) -> ast.Expr:
        cond = self.parse_binary(1)
        if self.accept("?"):
            then = self.parse_expression()
            self.expect(":")
            otherwise = self.parse_ternary()
            return ast.Ternary(cond, then, otherwise, loc=cond.loc)
        return cond

    def _binary_operator(self) -> tuple[str, int] | None:
        token = self.peek()
        kind = token.kind
        if kind == ">":
            following = self.peek(1)
            if (
                following.kind == ">"
                and not following.space_before
                and following.loc.line == token.loc.line
            ):
                return ">>", 2
            return ">", 1
        if kind in BINARY_PRECEDENCE:
            return kind, 1
        return None

    def parse_binary(self, min_precedence: int) -> ast.Expr:
        left = self.parse_unary()
        while True:
            operator = self._binary_operator()
            if operator is None:
                return left
            op, width = operator
            precedence = BINARY_PRECEDENCE[op]
            if precedence < min_precedence:
                return left
            for _ in range(width):
                self.next()
            right = self.parse_binary(precedence + 1)
            left = ast.Binary(op, left, right, loc=left.loc)

    def parse_unary(self) -> ast.Expr:
        token = self.peek()
        if token.kind in ("-", "!", "~", "+"):
            self.next()
            operand = self.parse_unary()
            if (
                token.kind == "-"
                and isinstance(operand, ast.IntLiteral)
                and operand.width is None
                and not operand.text.startswith("-")
            ):
                return ast.IntLiteral(
                    -operand.value, None, False, "-" + operand.text, loc=token.loc
                )
            return ast.Unary(token.kind, operand, loc=token.loc)
        if token.kind == "(" and self.cast_follows():
            self.next()
            type_ref = self.parse_type()
            self.expect(")")
            operand = self.parse_unary()
            return ast.Cast(type_ref, operand, loc=token.loc)
        return self.parse_postfix(self.parse_primary())

    def cast_follows(self) -> bool:
        following = self.peek(1)
        if following.kind in ("bit", "int", "varbit", "bool", "string", "error", "tuple"):
            # "(error.NoError)" is a parenthesised expression, "(error)" a cast.
            return not (following.kind == "error" and self.peek(2).kind == ".")
        if following.kind == IDENT and self.is_type_name(following.text):

            def attempt() -> bool:
                self.next()
                self.parse_type()
                if not self.at(")"):
                    raise _Backtrack()
                return True

            saved = self.pos
            result = self.speculate(attempt)
            self.pos = saved
            return bool(result)
        return False

    def parse_primary(self) -> ast.Expr:
        token = self.peek()
        kind = token.kind
        if kind == INT:
            self.next()
            value, width, signed = token.value  # type: ignore[misc]
            return ast.IntLiteral(value, width, signed, token.text, loc=token.loc)
        if kind in ("true", "false"):
            self.next()
            return ast.BoolLiteral(kind == "true", loc=token.loc)
        if kind == STRING:
            self.next()
            return ast.StringLiteral(str(token.value), loc=token.loc)
        if kind == "(":
            self.next()
            expr = self.parse_expression()
            self.expect(")")
            return expr
        if kind == "{":
            return self.parse_brace_expression()
        if kind == "error":
            self.next()
            return ast.PathExpr("error", loc=token.loc)
        if kind == "default":
            self.next()
            return ast.DefaultExpr(loc=token.loc)
        if kind == ".":
            self.next()
            name = self.parse_name()
            if self.is_type_name(name.text) and self.at("(", "<"):
                return self.parse_constructor_call(
                    ast.NamedTypeRef(name.text, [], True, loc=name.loc), name
                )
            return ast.PathExpr(name.text, True, loc=name.loc)
        if kind in ("bit", "int", "varbit", "bool", "tuple"):
            raise token.loc.unsupported("type expressions (e.g. 'bit<8>.minSizeInBits()')")
        if kind in UNSUPPORTED_KEYWORDS:
            raise token.loc.unsupported(UNSUPPORTED_KEYWORDS[kind])
        if self.is_name_token(token):
            self.next()
            if token.text == "_":
                return ast.DontCare(loc=token.loc)
            if self.is_type_name(token.text) and self.at("(", "<"):
                if self.at("("):
                    return self.parse_constructor_call(
                        ast.NamedTypeRef(token.text, [], loc=token.loc), token
                    )
                type_args = self.speculate(self.parse_type_args)
                if type_args is not None and self.at("("):
                    ref = ast.NamedTypeRef(token.text, type_args, loc=token.loc)
                    return self.parse_constructor_call(ref, token)
            return ast.PathExpr(token.text, loc=token.loc)
        raise self.syntax_error("an expression", token)

    def parse_constructor_call(
        self, type_ref: ast.NamedTypeRef, token: Token
    ) -> ast.ConstructorCall:
        if self.at("<"):
            type_ref.type_args = self.parse_type_args()
        args = self.parse_arguments()
        return ast.ConstructorCall(type_ref, args, loc=token.loc)

    def parse_brace_expression(self) -> ast.Expr:
        start = self.expect("{")
        if self.accept("}"):
            return ast.ListExpr([], loc=start.loc)
        if self.at("#"):
            raise self.peek().loc.unsupported("'{#}' invalid-header expressions")
        if (
            self.is_name_token(self.peek())
            and self.peek(1).kind == "="
            and self.peek(2).kind != "="
        ):
            fields: list[ast.NamedExpr] = []
            while True:
                name = self.parse_name("a field name")
                self.expect("=")
                value = self.parse_expression()
                fields.append(ast.NamedExpr(name.text, value, loc=name.loc))
                if not self.accept(","):
                    break
                if self.at("}"):
                    break
            self.expect("}", "',' or '}'")
            return ast.StructExpr(fields, loc=start.loc)
        elements = [self.parse_expression()]
        while self.accept(","):
            if self.at("}"):
                break
            elements.append(self.parse_expression())
        self.expect("}", "',' or '}'")
        return ast.ListExpr(elements, loc=start.loc)

    def parse_postfix(self, expr: ast.Expr) -> ast.Expr:
        while True:
            token = self.peek()
            if token.kind == ".":
                self.next()
                member = self.parse_member_name()
                expr = ast.Member(expr, member.text, member_loc=member.loc, loc=expr.loc)
            elif token.kind == "[":
                self.next()
                index = self.parse_expression()
                if self.accept(":"):
                    low = self.parse_expression()
                    self.expect("]")
                    expr = ast.Slice(expr, index, low, loc=expr.loc)
                else:
                    self.expect("]")
                    expr = ast.Index(expr, index, loc=expr.loc)
            elif token.kind == "(":
                args = self.parse_arguments()
                expr = ast.Call(expr, [], args, loc=expr.loc)
            elif (
                token.kind == "<"
                and isinstance(expr, (ast.PathExpr, ast.Member))
                and self._type_args_start()
            ):
                type_args = self.speculate(self._parse_call_type_args)
                if type_args is None:
                    return expr
                args = self.parse_arguments()
                expr = ast.Call(expr, type_args, args, loc=expr.loc)
            else:
                return expr

    def _type_args_start(self) -> bool:
        following = self.peek(1)
        if following.kind in TYPE_KEYWORDS:
            return True
        if following.kind == IDENT:
            return self.is_type_name(following.text) or following.text == "_"
        return following.kind == "."

    def _parse_call_type_args(self) -> list[ast.TypeRef]:
        args = self.parse_type_args()
        if not self.at("("):
            raise _Backtrack()
        return args


def _tokens_text(tokens: list[Token]) -> str:
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if index and token.space_before:
            parts.append(" ")
        parts.append(token.text)
    return "".join(parts)


def _first_token_of(expr: ast.Expr, parser: Parser) -> Token:
    return Token(IDENT, "", expr.loc)


def parse_tokens(tokens: list[Token]) -> ast.Program:
    """Parse a preprocessed token list (ending with EOF)."""
    return Parser(tokens).parse_program()


def location_of(token: Token) -> SourceLocation:
    return token.loc
