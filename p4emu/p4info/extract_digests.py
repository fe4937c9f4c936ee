"""Digests and ``@controller_header`` packet-in / packet-out metadata -> the model (part
of :mod:`p4emu.p4info.extract`).
"""

from __future__ import annotations

from collections.abc import Iterator

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.annotations import (
    explicit_id,
    listed_annotations,
    preamble,
    type_control_plane_name,
)
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.extract_base import (
    ExtractorBase,
    Visit,
)
from p4emu.p4info.model import (
    ControllerHeader,
    ControllerMetadata,
    Digest,
    Preamble,
)
from p4emu.p4info.typespecs import control_plane_width, flatten_fields


class DigestsExtractor(ExtractorBase):
    def _digests(
        self,
        actions: list[tuple[ast.ActionDecl, ast.BlockInstance | None]],
        visits: list[Visit],
    ) -> None:
        # p4c scans every action of the control (with the actions they call already inlined
        # by InlineActions), then the apply body (functions inlined, action calls not).
        nodes: list[ast.Node] = []
        for decl, _ in actions:
            nodes.extend(self._walk_inlined(decl.body, into_actions=True))
        for visit in visits:
            nodes.append(visit.node)
            if isinstance(visit.node, ast.Call) and isinstance(visit.node.target, ast.FunctionCall):
                nodes.extend(self._walk_inlined(visit.node.target.function.body, False))
        for node in nodes:
            if self._note_extern_function(node):
                assert isinstance(node, ast.Call)
                target = node.target
                assert isinstance(target, ast.ExternFunctionCall)
                if target.function.name == "digest":
                    self._digest(node, target)

    def _walk_inlined(self, root: ast.Node, into_actions: bool) -> Iterator[ast.Node]:
        """Walk ``root`` and the bodies of the functions (and, with ``into_actions``, the
        actions) it calls: p4c's front end inlines those before generating P4Info."""
        stack: list[ast.Node] = [root]
        seen: set[int] = set()
        while stack:
            current = stack.pop()
            for node in ast.walk(current):
                yield node
                if isinstance(node, ast.Call):
                    callee = None
                    if isinstance(node.target, ast.ActionCall) and into_actions:
                        callee = node.target.action
                    elif isinstance(node.target, ast.FunctionCall):
                        callee = node.target.function
                    if callee is not None and id(callee) not in seen:
                        seen.add(id(callee))
                        stack.append(callee.body)

    def _note_extern_function(self, node: ast.Node) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.target, ast.ExternFunctionCall):
            self.touched_type_info = True  # p4c: addExternFunction -> mutable_type_info()
            return True
        return False

    def _digest(self, call: ast.Call, target: ast.ExternFunctionCall) -> None:
        if not target.type_args:
            raise ExtractError(call.loc, "digest() without a data type")
        data_type = target.type_args[0]
        if isinstance(data_type, t.StructLikeType):
            name = type_control_plane_name(data_type.decl, data_type.name)
        else:
            # p4c auto-names digests of anonymous types (tuples) and warns.
            name = self.digest_auto_names.setdefault(
                id(call), f"digest_{len(self.digest_auto_names)}"
            )
        spec = self.types.spec(data_type, call.loc)
        self.model.digests.append(Digest(Preamble(name), spec))

    def _controller_headers(self) -> None:
        for decl in self.program.declarations(ast.HeaderDecl):
            assert isinstance(decl, ast.HeaderDecl)
            annotation = decl.annotation("controller_header")
            if annotation is None:
                continue
            controller_name = annotation.string_arg()
            if not controller_name:
                raise ExtractError(annotation.loc, "@controller_header needs a string argument")
            header = decl.type
            if not isinstance(header, t.HeaderType):
                raise ExtractError(decl.loc, f"header {decl.name} was not type checked")
            metadata: list[ControllerMetadata] = []
            hidden = decl.has_annotation("hidden")
            for path, info in flatten_fields(header):
                what = f"field {path} of controller header {decl.name}"
                if not isinstance(info.type, (t.BitsType, t.NewType, t.EnumType)):
                    raise ExtractError(
                        decl.loc, f"{what} must be bit<>, int<>, a new type or a serializable enum"
                    )
                width, type_name = control_plane_width(info.type, decl.loc, what)
                field_hidden = any(a.name == "hidden" for a in info.annotations)
                if not hidden and not field_hidden:
                    self.touched_type_info = True
                    self._register_scalar_type(info.type, decl.loc)
                metadata.append(
                    ControllerMetadata(
                        path,
                        width,
                        explicit_id(info.annotations),
                        listed_annotations(info.annotations),
                        type_name,
                        field_hidden,
                    )
                )
            self.model.controller_headers.append(
                ControllerHeader(
                    preamble(controller_name, decl),
                    type_control_plane_name(decl, decl.name),
                    metadata,
                    hidden,
                )
            )
