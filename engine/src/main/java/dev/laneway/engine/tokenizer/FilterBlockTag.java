package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;

import java.util.Objects;

/**
 * Jinja2's {@code {% filter name %}...{% endfilter %}}: the block's output passed through a filter (templates such as
 * FireFunction's wrap their whole prompt in {@code filter trim}); the template engine has no such block of its own.
 */
final class FilterBlockTag implements Tag {
    /** The block's output, as seen by the filter expression only (a name a template cannot spell by accident). */
    private static final String BODY = "__laneway_filter_block__";

    @Override
    public String getName() {
        return "filter";
    }

    @Override
    public String getEndTagName() {
        return "endfilter";
    }

    @Override
    public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
        StringBuilder body = new StringBuilder();
        for (Node child : tagNode.getChildren()) {
            body.append(child.render(interpreter).getValue());
        }
        try (JinjavaInterpreter.InterpreterScopeClosable scope = interpreter.enterScope()) {
            interpreter.getContext().put(BODY, body.toString());
            return Objects.toString(interpreter.resolveELExpression(BODY + " | " + tagNode.getHelpers().strip(),
                    tagNode.getLineNumber()), "");
        }
    }
}
