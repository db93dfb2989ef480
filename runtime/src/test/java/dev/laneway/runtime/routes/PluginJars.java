package dev.laneway.runtime.routes;

import dev.laneway.spi.Route;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/** Builds a real route plugin jar: compiles a route's source against the SPI and packs it with its service file. */
final class PluginJars {
    private PluginJars() {
    }

    /**
     * A jar holding one route class {@code plugin.<className>} whose source is {@code source}, registered in
     * {@code META-INF/services}.
     */
    static Path build(Path workDir, String className, String source, Path jar) throws IOException {
        Path src = workDir.resolve("src/plugin/" + className + ".java");
        Path classes = workDir.resolve("classes");
        Files.createDirectories(src.getParent());
        Files.createDirectories(classes);
        Files.writeString(src, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int rc = javac.run(null, null, errors, "-classpath", spiLocation(), "-d", classes.toString(), src.toString());
        if (rc != 0) {
            throw new IllegalStateException("the plugin source does not compile: " + errors.toString(StandardCharsets.UTF_8));
        }
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream jarOut = new JarOutputStream(out);
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                jarOut.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                jarOut.write(Files.readAllBytes(f));
                jarOut.closeEntry();
            }
            jarOut.putNextEntry(new JarEntry("META-INF/services/" + Route.class.getName()));
            jarOut.write(("plugin." + className + "\n").getBytes(StandardCharsets.UTF_8));
            jarOut.closeEntry();
        }
        return jar;
    }

    private static String spiLocation() {
        try {
            return Path.of(Route.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
