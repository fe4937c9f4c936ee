"""The block-instance tree under ``main`` and the control-plane object lists of the
:class:`ast.CheckedProgram`."""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.source import SourceLocation
from p4emu.frontend.typecheck.core import (
    CheckerCore,
)


class InstanceChecks(CheckerCore):
    """The checked program under ``main``: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ checked program

    def build_checked_program(self) -> ast.CheckedProgram:
        for whole in self._whole_groups.values():
            raise self.unsupported(
                whole.loc,
                f"the struct-typed header field '{ast.expr_to_source(whole)}' used as a whole "
                "(use its fields)",
            )
        mains = self.globals.names.get("main")
        end = SourceLocation(self.main_file, 1, 1)
        if not mains or not isinstance(mains[0], ast.Instantiation):
            raise self.fail(
                end,
                "program has no 'main' package instantiation (e.g. V1Switch(MyParser(), ..., MyDeparser()) main;)",
            )
        main = mains[0]
        package = main.type_decl
        if not isinstance(package, ast.PackageTypeDecl):
            raise self.fail(main.loc, "'main' must be an instance of a package such as V1Switch")
        if package.name != "V1Switch":
            raise main.loc.unsupported(
                f"package {package.name} (only the v1model V1Switch package is supported)"
            )
        builder = _InstanceBuilder(self)
        # Global extern instances first: tables may use them (shared action profiles).
        builder.collect_globals(self.program)
        blocks: dict[str, ast.BlockInstance] = {}
        for bound in main.bound_args:
            value = bound.expr
            if value is None:
                raise self.fail(main.loc, f"V1Switch argument '{bound.param.name}' is missing")
            blocks[bound.param.name] = builder.top_block(value)
        for slot in ast.V1SWITCH_SLOTS:
            if slot not in blocks:
                raise self.fail(main.loc, f"V1Switch argument '{slot}' is missing")
        return ast.CheckedProgram(
            program=self.program,
            main=main,
            package=package,
            blocks=blocks,
            error_type=self.error_type,
            match_kind_type=self.match_kind_type,
            types=dict(self.named_types),
            constants=dict(self.constants),
            tables=builder.tables,
            actions=builder.actions,
            extern_instances=builder.externs,
            value_sets=builder.value_sets,
            source_files=list(self.source_files),
            warnings=list(self.warnings),
        )


class _InstanceBuilder:
    """Builds the block-instance tree and the control-plane object lists."""

    def __init__(self, checker: CheckerCore) -> None:
        self.checker = checker
        self.tables: list[ast.TableInstance] = []
        self.actions: list[ast.ActionInstance] = []
        self.externs: list[ast.ExternInstance] = []
        self.value_sets: list[ast.ValueSetInstance] = []
        self._global_actions: dict[int, ast.ActionInstance] = {}

    def top_block(self, value: ast.Expr) -> ast.BlockInstance:
        if isinstance(value, ast.ConstructorCall) and isinstance(
            value.decl, (ast.ParserDecl, ast.ControlDecl)
        ):
            decl = value.decl
            name = ast.qualify_name(None, decl)
            instance = ast.BlockInstance(decl, name, value)
            instance.constructor_args = {
                b.param.name: (b.expr.const_value if b.expr else None) for b in value.bound_args
            }
            self.add_block_arguments(instance, value.bound_args, 0)
        elif (
            isinstance(value, ast.PathExpr)
            and isinstance(value.decl, ast.Instantiation)
            and isinstance(value.decl.type_decl, (ast.ParserDecl, ast.ControlDecl))
        ):
            inst = value.decl
            decl = inst.type_decl
            assert isinstance(decl, (ast.ParserDecl, ast.ControlDecl))
            instance = ast.BlockInstance(decl, ast.qualify_name(None, inst), inst)
            instance.constructor_args = {
                b.param.name: (b.expr.const_value if b.expr else None) for b in inst.bound_args
            }
            self.add_block_arguments(instance, inst.bound_args, 0)
        else:
            raise self.checker.fail(
                value.loc,
                "V1Switch arguments must be parser or control instances such as MyIngress()",
            )
        self.populate(instance, depth=0)
        return instance

    def populate(self, block: ast.BlockInstance, depth: int) -> None:
        if depth > 64:
            raise self.checker.fail(
                block.decl.loc, f"{block.decl.name} instantiates itself recursively"
            )
        decl = block.decl
        for local in decl.locals:
            if isinstance(local, ast.Instantiation):
                type_decl = local.type_decl
                if isinstance(type_decl, (ast.ParserDecl, ast.ControlDecl)):
                    child = ast.BlockInstance(type_decl, block.qualified_name(local), local, block)
                    child.constructor_args = {
                        b.param.name: (b.expr.const_value if b.expr else None)
                        for b in local.bound_args
                    }
                    block.children[local.name] = child
                    self.add_block_arguments(child, local.bound_args, depth)
                    self.populate(child, depth + 1)
                elif isinstance(type_decl, ast.ExternDecl):
                    self.externs.append(
                        self.extern_instance(block.qualified_name(local), local, block)
                    )
            elif isinstance(local, ast.ActionDecl):
                self.actions.append(ast.ActionInstance(block.qualified_name(local), local, block))
            elif isinstance(local, ast.ValueSetDecl):
                self.value_sets.append(
                    ast.ValueSetInstance(block.qualified_name(local), local, block)
                )
        for local in decl.locals:
            if isinstance(local, ast.TableDecl):
                self.add_table(block, local)
        self.add_direct_invocations(block, depth)

    def add_block_arguments(
        self, block: ast.BlockInstance, bound_args: list[ast.BoundArg], depth: int
    ) -> None:
        """Constructor arguments that are parser/control instances (``Twice(Inc())``): each
        becomes a child of ``block`` keyed by the parameter name, named ``block.param``. An
        instance declared beside ``block`` and named (``Inc() shared; Twice(shared) t;``) is
        that instance itself, shared by every block it is passed to (as p4c: its tables and
        externs exist once)."""
        for bound in bound_args:
            expr = bound.expr
            if (
                isinstance(expr, ast.PathExpr)
                and isinstance(expr.decl, ast.Instantiation)
                and isinstance(expr.decl.type_decl, (ast.ParserDecl, ast.ControlDecl))
                and block.parent is not None
            ):
                shared = block.parent.children.get(expr.decl.name)
                if shared is not None and shared.instantiation is expr.decl:
                    block.children[bound.param.name] = shared
                    continue
            if isinstance(expr, ast.ConstructorCall) and isinstance(
                expr.decl, (ast.ParserDecl, ast.ControlDecl)
            ):
                name = f"{block.name}.{bound.param.name}"
                child = ast.BlockInstance(expr.decl, name, expr, block)
                child.constructor_args = {
                    b.param.name: (b.expr.const_value if b.expr else None) for b in expr.bound_args
                }
                block.children[bound.param.name] = child
                self.add_block_arguments(child, expr.bound_args, depth + 1)
                self.populate(child, depth + 1)

    def add_direct_invocations(self, block: ast.BlockInstance, depth: int) -> None:
        """``Sub.apply()`` without an instance: an implicit instance named after the type."""
        decl = block.decl
        roots: list[ast.Node] = (
            [decl.body] if isinstance(decl, ast.ControlDecl) else list(decl.states)
        )
        for root in roots:
            for node in ast.walk(root):
                if not (isinstance(node, ast.Call) and isinstance(node.target, ast.BlockApply)):
                    continue
                target = node.target
                if (
                    target.instance is not None
                    or target.ctor_param is not None
                    or target.block.name in block.children
                ):
                    continue
                child = ast.BlockInstance(
                    target.block, block.qualified_name(target.block), None, block
                )
                block.children[target.block.name] = child
                self.populate(child, depth + 1)

    def extern_instance(
        self,
        name: str,
        decl: ast.Instantiation | ast.ConstructorCall,
        block: ast.BlockInstance | None,
    ) -> ast.ExternInstance:
        instance_type = decl.type
        base = instance_type.base if isinstance(instance_type, t.SpecializedType) else instance_type
        assert isinstance(base, t.ExternType)
        type_args = instance_type.args if isinstance(instance_type, t.SpecializedType) else ()
        args = [b.expr.const_value if b.expr is not None else None for b in decl.bound_args]
        return ast.ExternInstance(name, decl, base, type_args, args, block)

    def add_table(self, block: ast.BlockInstance, table: ast.TableDecl) -> None:
        name = block.qualified_name(table)
        instance = ast.TableInstance(name, table, block)
        for prop in ("counters", "meters", "implementation"):
            bound = getattr(table, prop)
            if bound is None:
                continue
            if isinstance(bound, ast.ConstructorCall):
                extern = self.extern_instance(name, bound, block)
                extern.table = instance
                self.externs.append(extern)
            else:
                extern = next(
                    (e for e in self.externs if e.decl is bound and e.block is block), None
                )
                if extern is None:
                    extern = next((e for e in self.externs if e.decl is bound), None)
                if extern is not None and prop != "implementation":
                    extern.table = instance
            setattr(instance, prop, extern)
        self.tables.append(instance)
        for ref in table.actions:
            action = ref.action
            assert action is not None
            found = next((a for a in self.actions if a.decl is action and a.block is block), None)
            if found is None:
                found = self._global_actions.get(id(action))
            if found is None:
                found = ast.ActionInstance(ast.qualify_name(None, action), action, None)
                self._global_actions[id(action)] = found
                self.actions.append(found)
            found.tables.append(instance)

    def collect_globals(self, program: ast.Program) -> None:
        for decl in program.declarations:
            if isinstance(decl, ast.Instantiation) and isinstance(decl.type_decl, ast.ExternDecl):
                self.externs.append(self.extern_instance(ast.qualify_name(None, decl), decl, None))
