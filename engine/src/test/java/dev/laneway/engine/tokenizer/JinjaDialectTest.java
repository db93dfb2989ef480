package dev.laneway.engine.tokenizer;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class JinjaDialectTest {

    @Test
    void parenthesizesTheOperandOfUnaryNot() {
        assertEquals("{% if not (a == b) and c %}", JinjaDialect.adapt("{% if not a == b and c %}"));
        assertEquals("{{ x if not (y) else z }}", JinjaDialect.adapt("{{ x if not y else z }}"));
        assertEquals("{%- if not (m['role'] == 'x') -%}", JinjaDialect.adapt("{%- if not m['role'] == 'x' -%}"));
        assertEquals("{{ f(not (a), b) }}", JinjaDialect.adapt("{{ f(not a, b) }}"));
        assertEquals("{{ not (not (a)) }}", JinjaDialect.adapt("{{ not not a }}"));
    }

    @Test
    void leavesBinaryNotAlone() {
        assertEquals("{% if a is not none %}", JinjaDialect.adapt("{% if a is not none %}"));
        assertEquals("{% if 'x' not in y %}", JinjaDialect.adapt("{% if 'x' not in y %}"));
        assertEquals("{{ 'not a == b' }}", JinjaDialect.adapt("{{ 'not a == b' }}"));
    }

    @Test
    void parenthesizesKeywordArgumentValues() {
        assertEquals("{% set ns = namespace(a=(x|length - 1), b=(true)) %}",
                JinjaDialect.adapt("{% set ns = namespace(a=x|length - 1, b=true) %}"));
        assertEquals("{{ f(a == b) }}", JinjaDialect.adapt("{{ f(a == b) }}"));
        assertEquals("{% macro m(x, y=1) %}", JinjaDialect.adapt("{% macro m(x, y=1) %}"));
    }

    @Test
    void reversesWithAFilter() {
        assertEquals("{{ messages|reverse|list }}", JinjaDialect.adapt("{{ messages[::-1] }}"));
    }

    @Test
    void aBinaryPlusGetsSpaces() {
        assertEquals("{{ messages[:n + 1] }}", JinjaDialect.adapt("{{ messages[:n+1] }}"));
        assertEquals("{{ +1 }}", JinjaDialect.adapt("{{ +1 }}"));
        assertEquals("[3]", new ChatTemplate("{{ [n+2] }}", "", "").render(java.util.List.of(), false,
                java.util.Map.of("n", 1)));
    }

    @Test
    void loopsWalkTheirSequenceAsPythonDoes() {
        assertEquals("{% for m in (messages|reverse|list)|laneway_loop_items %}",
                JinjaDialect.adapt("{% for m in messages[::-1] %}"));
        assertEquals("{%- for k in (d)|laneway_loop_items %}{% if k != 'x' -%}[{{ k }}]{%- endif %}{% endfor %}",
                JinjaDialect.adapt("{%- for k in d if k != 'x' -%}[{{ k }}]{%- endfor %}"));
    }

    @Test
    void stripsOnlyLeadingWhitespaceOfALine() {
        assertEquals("x {% if a %}\n{% endif %}", JinjaDialect.adapt("x {% if a %}\n  {% endif %}"));
        assertEquals("  {%- if a %}", JinjaDialect.adapt("  {%- if a %}"));
        assertEquals("{{ '' }}", JinjaDialect.adapt("   {# c #}"));
    }

    /** A comment goes with the whitespace Jinja2 takes with it, and a '-' beside it strips no further than it. */
    @Test
    void dropsCommentsAsJinja2Does() {
        assertEquals("a{{ '' }}b", JinjaDialect.adapt("a{# c #}\nb"));
        assertEquals("a{{ '' }}b", JinjaDialect.adapt("a \n {#- c -#} \n b"));
        assertEquals("{%- macro m() -%}\n{{ '' }}    {{ x }}{%- endmacro %}",
                JinjaDialect.adapt("{%- macro m() -%}\n{# c #}\n    {{ x }}{%- endmacro %}"));
    }

    @Test
    void leavesRawBlocksAndDropsGenerationMarkers() {
        assertEquals("{% raw %}{{ not a == b }}{% endraw %}",
                JinjaDialect.adapt("{% raw %}{{ not a == b }}{% endraw %}"));
        assertEquals("{{ x }}", JinjaDialect.adapt("{% generation %}{{ x }}{% endgeneration %}"));
    }

    @Test
    void dropsOneTrailingNewline() {
        assertEquals("{{ x }}\n", JinjaDialect.adapt("{{ x }}\n\n"));
    }
}
