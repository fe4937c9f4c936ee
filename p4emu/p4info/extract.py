"""Checked v1model program -> :class:`ControlPlaneModel`, reproducing what p4c's front end
hands to its P4Info serializer.

p4c generates P4Info from the program *after* its front end (backends/bmv2/simple_switch
main.cpp calls ``serializeP4RuntimeIfRequired`` right after ``FrontEnd``). This module
recomputes the effects of the front-end passes that matter for P4Info instead of rewriting
the AST:

* ``CreateBuiltins``: a table without ``default_action`` gets ``default_action = NoAction()``
  (not const) and, unless ``NoAction`` is already listed, ``@defaultonly NoAction`` appended
  to its actions.
* ``RemoveAllUnusedDeclarations``: tables never applied, actions no live table or apply
  body refers to, value sets no ``select`` uses, and sub-controls never applied disappear;
  extern instances and type declarations always stay.
* ``InstantiateDirectCalls`` + ``Inline``: sub-parsers/controls are flattened into their
  caller, their locals placed right after the instance declaration (instances created for
  ``Type.apply()`` calls are appended after the caller's locals).
* ``LocalizeAllActions``: top-level actions used by a control are copied to the *front* of
  its locals, in first-use order (tables' action lists, default actions and entries in
  property order, then the apply body).
* ``TableKeyNames``: key fields without ``@name`` are named from the key expression.

It then walks the program the way ``P4RuntimeSerializer`` walks p4c's evaluated block tree:
top-level extern instances, then the six V1Switch blocks in parameter order (parser,
verify checksum, ingress, egress, compute checksum, deparser), each block's flattened
locals in order. Sources: p4lang/p4c ``control-plane/p4RuntimeSerializer.cpp``,
``p4RuntimeArchStandard.{h,cpp}``, ``typeSpecConverter.cpp``, ``frontends/p4/
{createBuiltins,unusedDeclarations,directCalls,inlining,localizeActions,tableKeyNames,
hierarchicalNames}.cpp``. See docs/p4info.md.
"""

from __future__ import annotations

import pickle
import threading
import weakref

from p4emu.frontend import ast
from p4emu.p4info.annotations import (
    documentation,
    kv_from_body,
    listed_annotations,
)
from p4emu.p4info.builder import build_p4info
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.extract_base import (
    Local,
    Visit,
)
from p4emu.p4info.extract_digests import DigestsExtractor
from p4emu.p4info.extract_tables import TablesExtractor
from p4emu.p4info.model import (
    ControlPlaneModel,
    PkgInfo,
)
from p4emu.proto import p4i

_models: weakref.WeakKeyDictionary[ast.CheckedProgram, bytes] = weakref.WeakKeyDictionary()
_models_lock = threading.Lock()


def extract_model(program: ast.CheckedProgram) -> ControlPlaneModel:
    """The control-plane model p4c would serialize for ``program``.

    Extracted once per program object (a checked program is not changed after checking;
    every switch compiled from it asks again: ``p4emu.backend.ids.assign_ids``) and kept
    pickled: each call returns a model of its own (unpickling takes a fifth of a deep
    copy), so a caller that changes its model changes no other's."""
    with _models_lock:
        kept = _models.get(program)
    if kept is not None:
        found: ControlPlaneModel = pickle.loads(kept)
        return found
    model = _Extractor(program).run()
    try:
        kept = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return model  # not kept: extracted again next time
    with _models_lock:
        _models[program] = kept
    return model


def p4info_for_program(program: ast.CheckedProgram) -> p4i.P4Info:
    """The P4Info p4c generates for ``program`` (``extract_model`` + ``build_p4info``)."""
    return build_p4info(extract_model(program))


# --------------------------------------------------------------------------- traversal


class _Extractor(TablesExtractor, DigestsExtractor):
    """Walks the program as p4c's ``P4RuntimeSerializer`` walks its block tree."""

    def run(self) -> ControlPlaneModel:
        self._global_externs()
        for slot in ast.V1SWITCH_SLOTS:
            block = self.program.blocks.get(slot)
            if block is None:
                continue
            if isinstance(block.decl, ast.ControlDecl):
                self._control(block)
            else:
                self._parser(block)
        self._controller_headers()
        self.model.pkg_info = self._pkg_info()
        self.model.type_info = self.types.info if self._type_info_present() else None
        return self.model

    def _flatten(self, block: ast.BlockInstance, live: set[int]) -> list[Local]:
        """The block's locals after inlining its *applied* sub-blocks (``live`` holds them)."""
        result: list[Local] = []
        own = block.decl.locals
        used_children: set[int] = set()
        for decl in own:
            result.append(Local(block, decl))
            if isinstance(decl, ast.Instantiation):
                child = block.children.get(decl.name)
                if child is not None and child.instantiation is decl:
                    used_children.add(id(child))
                    if id(child) in live:
                        result.extend(self._flatten(child, live))
        # Instances created for ``Type.apply()`` calls come after the caller's locals.
        for child in block.children.values():
            if id(child) not in used_children and id(child) in live and child.parent is block:
                # (an instance passed in from beside the block is its declarer's)
                result.extend(self._flatten(child, live))
        return result

    def _live_blocks(self, block: ast.BlockInstance) -> tuple[set[int], list[Visit]]:
        """Sub-blocks reachable through ``apply`` calls, and every node of the apply body
        (control) or states (parser) as p4c sees it after inlining: a sub-block's body
        right at the statement that applies it."""
        live = {id(block)}
        visits: list[Visit] = []
        self._visit_block(block, live, visits)
        return live, visits

    def _visit_block(self, block: ast.BlockInstance, live: set[int], visits: list[Visit]) -> None:
        decl = block.decl
        roots: list[ast.Node] = [decl.body] if isinstance(decl, ast.ControlDecl) else decl.states
        for root in roots:
            for node in ast.walk(root):
                visits.append(Visit(block, node))
                if not (isinstance(node, ast.Call) and isinstance(node.target, ast.BlockApply)):
                    continue
                child = self._child_for(block, node.target)
                if child is None:
                    kind = "control" if isinstance(node.target.block, ast.ControlDecl) else "parser"
                    raise ExtractError(
                        node.loc,
                        f"direct invocation {node.target.block.name}.apply() has no block "
                        f"instance in the checked program; instantiate the {kind} explicitly",
                    )
                if id(child) not in live:
                    live.add(id(child))
                    self._visit_block(child, live, visits)

    def _child_for(
        self, block: ast.BlockInstance, target: ast.BlockApply
    ) -> ast.BlockInstance | None:
        if target.ctor_param is not None:  # the instance passed as a constructor argument
            return block.children.get(target.ctor_param.name)
        if target.instance is not None:
            child = block.children.get(target.instance.name)
            if child is not None:
                return child
        for child in block.children.values():
            if child.decl is target.block and (
                target.instance is None or child.instantiation is target.instance
            ):
                return child
        return None

    def _parser(self, block: ast.BlockInstance) -> None:
        live, visits = self._live_blocks(block)
        used_sets = {
            id(visit.node.decl)
            for visit in visits
            if isinstance(visit.node, ast.PathExpr)
            and isinstance(visit.node.decl, ast.ValueSetDecl)
        }
        for local in self._flatten(block, live):
            decl = local.decl
            if isinstance(decl, ast.ValueSetDecl) and id(decl) in used_sets:
                self._value_set(local.block, decl)
            elif isinstance(decl, ast.Instantiation):
                instance = self._extern_for(decl, local.block)
                if instance is not None:
                    self._extern(instance)

    def _control(self, block: ast.BlockInstance) -> None:
        live, visits = self._live_blocks(block)
        flat = self._flatten(block, live)
        applied = {
            (id(visit.block), id(visit.node.target.table))
            for visit in visits
            if isinstance(visit.node, ast.Call) and isinstance(visit.node.target, ast.TableApply)
        }
        tables = [
            (local.block, local.decl)
            for local in flat
            if isinstance(local.decl, ast.TableDecl)
            and (id(local.block), id(local.decl)) in applied
        ]
        actions = self._control_actions(flat, tables, visits)
        self._emit_actions(actions)
        self._digests(actions, visits)
        for local in flat:
            decl = local.decl
            if isinstance(decl, ast.TableDecl) and (local.block, decl) in tables:
                self._table(local.block, decl)
            elif isinstance(decl, ast.Instantiation):
                instance = self._extern_for(decl, local.block)
                if instance is not None:
                    self._extern(instance)

    def _pkg_info(self) -> PkgInfo:
        main = self.program.main
        pkg = PkgInfo(arch=self.program.architecture)
        pkginfo = main.annotation("pkginfo")
        if pkginfo is not None:
            for key, value in (pkginfo.kv or kv_from_body(pkginfo)).items():
                if not isinstance(value, ast.StringLiteral):
                    raise ExtractError(
                        pkginfo.loc, f"value for '{key}' key in @pkginfo is not a string"
                    )
                if key in ("name", "version", "organization", "contact", "url", "arch"):
                    setattr(pkg, key, value.value)
        pkg.annotations = listed_annotations(main.annotations, skip=frozenset({"pkginfo"}))
        pkg.doc = documentation(main.annotations)
        return pkg
