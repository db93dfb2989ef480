package dev.laneway.runtime.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.serve.PackagedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The chat page at {@code /} in a real headless browser (Debian's chromium, driven through its chromedriver) against
 * packaged servers on the shared stories260K model: answers stream in and equal the API's, stop interrupts the
 * generation on the server, conversations survive a reload, the keyboard alone drives it, nothing overflows at phone
 * width, model output never runs as markup, and a key, a faulting device and a page turned off are handled.
 * Screenshots of the main states go to {@code target/web-screenshots/}.
 */
class WebPageTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path SCREENSHOTS = Path.of("target", "web-screenshots");
    private static final String KEY = "sk-laneway-page-7d2e";
    /** A prompt whose greedy answer runs to the token limit rather than ending early. */
    private static final String LONG_PROMPT = "Once upon a time";
    /**
     * Hostile model output: markup, a script, an event handler and a script link, which must all show as text; and an
     * https link, which must stay a link.
     */
    private static final String HOSTILE = "Look <img src=x onerror=\"window.__pwned='img'\"> here"
            + " <script>window.__pwned='script'</script>\n\n"
            + "[click me](javascript:window.__pwned='link') and [safe](https://example.com/a?b=1)\n\n"
            + "```html\n<b onmouseover=\"window.__pwned='code'\">bold</b>\n```\n";

    private static PackagedServer server;
    private static ChromeDriver browser;

    @BeforeAll
    static void start() throws Exception {
        server = PackagedServer.start(List.of(), "--streams", "2");
        browser = browser();
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterAll
    static void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
    }

    static ChromeDriver browser() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,760", "--lang=en-US");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }

    /** Every test starts on a fresh page with nothing kept in the browser. */
    @BeforeEach
    void freshPage() {
        open(browser, server);
        js("localStorage.clear()");
        browser.manage().logs().get(LogType.BROWSER); // drops what earlier pages logged
        open(browser, server);
    }

    private static void open(ChromeDriver driver, PackagedServer on) {
        driver.get(on.base + "/");
        waitFor(driver, () -> driver.findElements(By.cssSelector("#model option")).size() > 0
                || driver.findElement(By.id("key-dialog")).isDisplayed(), "the page to load");
    }

    // ---- the page loads ----

    @Test
    void thePageLoadsFromTheServerWithNoConsoleErrors() throws Exception {
        HttpResponse<String> page = server.get("/");
        assertEquals(200, page.statusCode());
        assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(page.body().startsWith("<!doctype html>"), page.body());
        assertEquals(200, server.get("/webui/app.js").statusCode());

        JsonNode card = JSON.readTree(server.get("/v1/models").body()).at("/data/0");
        assertEquals(PackagedServer.MODEL_ID, browser.findElement(By.id("model")).getAttribute("value"));
        String info = text("#model-info");
        assertTrue(info.contains(card.get("architecture").asText()), info);
        assertTrue(info.contains(card.get("route").asText() + " on " + card.get("device").asText()), info);
        // the server's load, from its public metrics
        waitFor(() -> text("#load").equals("Load: 0 of 2 running, 0 waiting"), "the load display");
        // the server's defaults beside the settings
        browser.findElement(By.id("open-settings")).click();
        assertEquals("Server default: 0.8", text("#d-temperature"));
        assertEquals("Server default: 40", text("#d-top_k"));
        assertTrue(text("#model-details").contains(card.get("architecture").asText()));
        screenshot("settings");
        // the system's dark theme
        String light = (String) js("return getComputedStyle(document.body).backgroundColor");
        browser.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", "dark"))));
        try {
            String dark = (String) js("return getComputedStyle(document.body).backgroundColor");
            assertEquals("rgb(247, 247, 245)", light);
            assertEquals("rgb(22, 24, 27)", dark);
            screenshot("settings-dark");
        } finally {
            browser.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features", List.of()));
        }
        assertNoConsoleErrors();
    }

    // ---- chat ----

    @Test
    void anAnswerStreamsInAndEqualsTheApisAnswerToTheSameGreedyRequest() throws Exception {
        recordRequests();
        settings(Map.of("temperature", "0", "max_tokens", "48"));
        type("Tell me a story about a cat.");
        browser.findElement(By.id("prompt")).sendKeys(Keys.ENTER);
        awaitAnswer();

        JsonNode sent = JSON.readTree((String) js("return window.__requests[0]"));
        assertTrue(sent.get("stream").asBoolean(), sent.toString());
        assertTrue(sent.at("/stream_options/include_usage").asBoolean(), sent.toString());
        assertEquals(PackagedServer.MODEL_ID, sent.get("model").asText());
        assertEquals("[{\"role\":\"user\",\"content\":\"Tell me a story about a cat.\"}]",
                sent.get("messages").toString());
        String greedy = server.chat("{\"model\":\"" + PackagedServer.MODEL_ID + "\",\"messages\":"
                + sent.get("messages") + ",\"max_tokens\":48,\"temperature\":0}")
                .at("/choices/0/message/content").asText();
        assertTrue(greedy.length() > 20, greedy);

        JsonNode kept = conversations().at("/0/messages/1");
        assertEquals(greedy, kept.get("content").asText());
        assertEquals(squeezed(greedy), squeezed(lastAnswerText()));
        // what the stream's usage and timings said
        String meta = text("article.msg.assistant .meta");
        assertTrue(meta.contains("48 tokens"), meta);
        assertTrue(meta.matches(".*generation [0-9.]+ tok/s.*"), meta);
        assertTrue(meta.contains("cut at the token limit"), meta);
        assertEquals(48, kept.at("/stats/completionTokens").asInt());
        assertTrue(browser.findElement(By.id("context")).isDisplayed());
        int total = kept.at("/stats/totalTokens").asInt();
        assertTrue(text("#context-text").startsWith(total + " / "), text("#context-text"));

        // a second turn computes only its new messages: the cache serves the first
        type("And then?");
        browser.findElement(By.id("send")).click();
        awaitAnswer();
        JsonNode second = conversations().at("/0/messages/3/stats");
        assertTrue(second.get("cachedTokens").asInt() > 0, second.toString());
        assertTrue(text("article.msg.assistant:last-of-type .meta").contains("cached"));
        waitFor(() -> text("#load").equals("Load: 0 of 2 running, 0 waiting"), "the load to settle");
        screenshot("answer");
        assertNoConsoleErrors();
    }

    /** Every setting reaches the request as its API field, and a JSON schema holds the answer to it. */
    @Test
    void theSettingsAreSentAsTheirFieldsAndTheSchemaHoldsTheAnswer() throws Exception {
        recordRequests();
        String schema = "{\"type\":\"object\",\"properties\":{\"answer\":{\"enum\":[\"yes\",\"no\"]}},"
                + "\"required\":[\"answer\"]}";
        settings(Map.of("temperature", "0.5", "top_p", "0.9", "top_k", "20", "min_p", "0.1", "max_tokens", "32",
                "seed", "7", "stop", "THE END\\n\n\nSTOP", "json_schema", schema));
        type("Is the sky blue?");
        browser.findElement(By.id("send")).click();
        awaitAnswer();
        JsonNode sent = JSON.readTree((String) js("return window.__requests[0]"));
        assertEquals(0.5, sent.get("temperature").asDouble());
        assertEquals(0.9, sent.get("top_p").asDouble());
        assertEquals(20, sent.get("top_k").asInt());
        assertEquals(0.1, sent.get("min_p").asDouble());
        assertEquals(32, sent.get("max_tokens").asInt());
        assertEquals(7, sent.get("seed").asInt());
        assertEquals("[\"THE END\\n\",\"STOP\"]", sent.get("stop").toString());
        assertEquals("json_schema", sent.at("/response_format/type").asText());
        assertEquals(JSON.readTree(schema), sent.at("/response_format/json_schema/schema"));
        JsonNode answer = JSON.readTree(conversations().at("/0/messages/1/content").asText());
        assertTrue(answer.get("answer").asText().matches("yes|no"), answer.toString());

        // back to the server's defaults: nothing is sent
        browser.findElement(By.id("open-settings")).click();
        browser.findElement(By.id("reset-settings")).click();
        browser.findElement(By.id("close-settings")).click();
        type("Once");
        browser.findElement(By.id("send")).click();
        awaitAnswer();
        JsonNode plain = JSON.readTree((String) js("return window.__requests[1]"));
        for (String field : new String[]{"temperature", "top_p", "top_k", "min_p", "max_tokens", "seed", "stop",
                "response_format"}) {
            assertFalse(plain.has(field), field + " sent: " + plain);
        }
        assertNoConsoleErrors();
    }

    /** A text file's content goes into the message, fenced, before what is typed. */
    @Test
    void anAttachedTextFileIsPutIntoTheMessage() throws Exception {
        Path file = Files.createTempFile("notes", ".txt");
        try {
            Files.writeString(file, "line one\n```\nline three\n");
            browser.findElement(By.id("attach-file")).sendKeys(file.toAbsolutePath().toString());
            waitFor(() -> !browser.findElements(By.cssSelector("#attachments .chip")).isEmpty(), "the file");
            assertTrue(text("#attachments").contains(file.getFileName().toString()));
            settings(Map.of("temperature", "0", "max_tokens", "4"));
            type("Summarise it.");
            browser.findElement(By.id("send")).click();
            awaitAnswer();
            assertEquals(file.getFileName() + ":\n````\nline one\n```\nline three\n````\n\nSummarise it.",
                    conversations().at("/0/messages/0/content").asText());
            assertTrue(browser.findElements(By.cssSelector("#attachments .chip")).isEmpty(), "sent with the message");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void stopInterruptsTheGenerationOnTheServer() throws Exception {
        settings(Map.of("temperature", "0", "max_tokens", "1500"));
        double stepsBefore = metric("laneway_engine_steps_total", "");
        type(LONG_PROMPT);
        browser.findElement(By.id("send")).click();
        // stop as soon as the first words are in
        waitFor(() -> !lastAnswerText().isBlank(), "the answer to begin", Duration.ofMillis(2));
        browser.findElement(By.id("stop")).click();
        awaitAnswer();
        // the server ended the generation when the page went away from it: the stream is free again, and it ran
        // fewer steps than the 1,500 tokens would have taken
        waitFor(() -> metric("laneway_streams_busy", "") == 0, "the server to end the generation");
        double steps = metric("laneway_engine_steps_total", "") - stepsBefore;
        assertTrue(steps > 0 && steps < 1500, steps + " steps");

        JsonNode kept = conversations().at("/0/messages/1");
        assertTrue(kept.get("stopped").asBoolean(), kept.toString());
        String full = server.chat("{\"messages\":[{\"role\":\"user\",\"content\":\"" + LONG_PROMPT + "\"}],"
                + "\"max_tokens\":1500,\"temperature\":0}").at("/choices/0/message/content").asText();
        String partial = kept.get("content").asText();
        assertTrue(!partial.isEmpty() && full.startsWith(partial) && partial.length() < full.length(),
                "stopped at " + partial.length() + " of " + full.length() + " characters");
        assertTrue(text("article.msg.assistant .meta").contains("stopped"));
        assertNoConsoleErrors();
    }

    @Test
    void aConversationSurvivesAReload() throws Exception {
        settings(Map.of("temperature", "0", "max_tokens", "12"));
        browser.findElement(By.cssSelector("#system-box summary")).click();
        browser.findElement(By.id("system")).sendKeys("You tell short stories.");
        type("Once there was a dog");
        browser.findElement(By.id("send")).click();
        awaitAnswer();
        String answer = lastAnswerText();
        // renamed through the list
        browser.findElement(By.cssSelector("#conversations li[aria-current=true] button.small")).click();
        WebElement name = browser.findElement(By.cssSelector("#conversations input"));
        name.sendKeys(Keys.chord(Keys.CONTROL, "a"), "Dog story", Keys.ENTER);

        browser.navigate().refresh();
        waitFor(() -> !browser.findElements(By.cssSelector("article.msg.assistant")).isEmpty(), "the conversation");
        assertEquals("Dog story", text("#conversations li[aria-current=true] .open"));
        assertEquals("Once there was a dog", text("article.msg.user .body"));
        assertEquals(answer, lastAnswerText());
        assertEquals("You tell short stories.", browser.findElement(By.id("system")).getAttribute("value"));
        assertEquals("0", browser.findElement(By.id("s-temperature")).getAttribute("value"));

        // a second conversation, then delete it (asked twice) and the first is shown again
        browser.findElement(By.id("new-chat")).click();
        assertEquals(2, browser.findElements(By.cssSelector("#conversations li")).size());
        List<WebElement> buttons = browser.findElements(By.cssSelector("#conversations li[aria-current=true] "
                + "button.small"));
        buttons.get(1).click();
        browser.findElements(By.cssSelector("#conversations li[aria-current=true] button.small")).get(1).click();
        assertEquals(1, browser.findElements(By.cssSelector("#conversations li")).size());
        assertEquals("Dog story", text("#conversations li[aria-current=true] .open"));
        assertNoConsoleErrors();
    }

    /** Only keys: send, a new line, stop, settings, regenerate, and edit-and-regenerate of the last turn. */
    @Test
    void theKeyboardAloneDrivesThePage() throws Exception {
        Actions keys = new Actions(browser);
        assertEquals("prompt", activeId(), "the message box has the focus on load");
        // settings: from the message box back to the Settings button, then the fields in order
        tabUntil(() -> "open-settings".equals(activeId()), true);
        keys.sendKeys(Keys.ENTER).perform();
        assertEquals("s-temperature", activeId());
        keys.sendKeys("0").sendKeys(Keys.TAB, Keys.TAB, Keys.TAB, Keys.TAB).perform();
        assertEquals("s-max_tokens", activeId());
        keys.sendKeys("1500").sendKeys(Keys.ESCAPE).perform();
        assertTrue(browser.findElement(By.id("settings")).getAttribute("hidden") != null, "Esc closes the settings");
        tabUntil(() -> "prompt".equals(activeId()), false);

        keys.sendKeys("Once upon").keyDown(Keys.SHIFT).sendKeys(Keys.ENTER).keyUp(Keys.SHIFT).sendKeys("a time")
                .perform();
        assertEquals("Once upon\na time", browser.findElement(By.id("prompt")).getAttribute("value"));
        keys.sendKeys(Keys.ENTER).perform();
        waitFor(() -> !lastAnswerText().isBlank(), "the answer to begin", Duration.ofMillis(2));
        keys.sendKeys(Keys.ESCAPE).perform();
        awaitAnswer();
        assertTrue(conversations().at("/0/messages/1/stopped").asBoolean(), "Esc stops the answer");
        assertEquals("prompt", activeId());

        // regenerate the stopped answer, to its end this time
        tabUntil(() -> "Regenerate".equals(browser.switchTo().activeElement().getText()), true);
        keys.sendKeys(Keys.ENTER).perform();
        awaitAnswer();
        JsonNode regenerated = conversations().at("/0/messages");
        assertEquals(2, regenerated.size());
        assertFalse(regenerated.at("/1/stopped").asBoolean(false));
        assertTrue(regenerated.at("/1/content").asText().length() > 100);

        // edit the last message and regenerate
        focus("prompt");
        tabUntil(() -> "Edit".equals(browser.switchTo().activeElement().getText()), true);
        keys.sendKeys(Keys.ENTER).perform();
        assertEquals("textarea", browser.switchTo().activeElement().getTagName());
        keys.keyDown(Keys.CONTROL).sendKeys("a").keyUp(Keys.CONTROL).sendKeys("One day").sendKeys(Keys.ENTER)
                .perform();
        awaitAnswer();
        JsonNode edited = conversations().at("/0/messages");
        assertEquals(2, edited.size());
        assertEquals("One day", edited.at("/0/content").asText());
        String greedy = server.chat("{\"messages\":[{\"role\":\"user\",\"content\":\"One day\"}],"
                + "\"max_tokens\":1500,\"temperature\":0}").at("/choices/0/message/content").asText();
        assertEquals(greedy, edited.at("/1/content").asText());
        assertNoConsoleErrors();
    }

    @Test
    void atPhoneWidthNothingOverflows() throws Exception {
        browser.executeCdpCommand("Emulation.setDeviceMetricsOverride", Map.of("width", 390, "height", 844,
                "deviceScaleFactor", 1, "mobile", true));
        try {
            open(browser, server);
            assertEquals(390L, js("return window.innerWidth"));
            settings(Map.of("temperature", "0", "max_tokens", "24"));
            type("Once upon a time there was a very long word: " + "supercalifragilistic".repeat(10));
            browser.findElement(By.id("send")).click();
            awaitAnswer();
            assertFits("the chat");
            screenshot("phone");
            importConversation("A long one", "Read https://example.com/" + "a".repeat(300) + " and "
                    + "x".repeat(400) + "\n\n```\n" + "let y = 1; ".repeat(60) + "\n```\n\n| a | b |\n|---|---|\n");
            assertFits("long words, links and code");
            browser.findElement(By.id("open-sidebar")).click();
            assertTrue(browser.findElement(By.id("sidebar")).isDisplayed());
            assertFits("the conversation list");
            screenshot("phone-conversations");
            browser.findElement(By.id("close-sidebar")).click();
            browser.findElement(By.id("open-settings")).click();
            assertFits("the settings");
            screenshot("phone-settings");
        } finally {
            browser.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
        }
    }

    private void assertFits(String what) {
        long width = (Long) js("return document.documentElement.scrollWidth");
        long body = (Long) js("return document.body.scrollWidth");
        assertTrue(width <= 390 && body <= 390, what + " is " + Math.max(width, body) + " px wide");
    }

    // ---- untrusted output ----

    /** Hostile text through the stream the page reads (its fetch answered with these events) shows as text. */
    @Test
    void markupInAStreamedAnswerShowsAsTextAndNothingRuns() throws Exception {
        StringBuilder events = new StringBuilder("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                + "\"content\":\"\"}}]}\n\n");
        // cut into small pieces, so that tags arrive split across events as tokens do
        for (int i = 0; i < HOSTILE.length(); i += 5) {
            String piece = HOSTILE.substring(i, Math.min(HOSTILE.length(), i + 5));
            events.append("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":")
                    .append(JSON.writeValueAsString(piece)).append("}}]}\n\n");
        }
        events.append("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":50,\"total_tokens\":59,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":4}},"
                + "\"timings\":{\"prompt_per_second\":900.25,\"predicted_per_second\":321.25}}\n\n");
        events.append("data: [DONE]\n\n");
        // the page's own fetch, answered for the chat endpoint with these events and a routed answer's header
        js("const events = arguments[0]; const real = window.fetch;"
                + "window.fetch = (url, init) => String(url).endsWith('/v1/chat/completions')"
                + " ? Promise.resolve(new Response(events, {status: 200, headers: {'Content-Type': 'text/event-stream',"
                + " 'X-Laneway-Route': 'code 0.24 cpu'}})) : real(url, init);", events.toString());
        type("Say something");
        browser.findElement(By.id("send")).click();
        awaitAnswer();
        assertShownAsText();
        String meta = text("article.msg.assistant .meta");
        assertTrue(meta.contains("50 tokens") && meta.contains("prompt 9 (4 cached)"), meta);
        assertTrue(meta.contains("prompt 900 tok/s") && meta.contains("generation 321 tok/s"), meta);
        assertTrue(meta.contains("Laya: code 0.24 cpu"), meta);
        screenshot("hostile-answer");
    }

    /** The same text in an imported conversation, rendered by the same code, shows as text too. */
    @Test
    void markupInAnImportedAnswerShowsAsTextAndNothingRuns() throws Exception {
        importConversation("Hostile", HOSTILE);
        assertEquals("Hostile", text("#conversations li[aria-current=true] .open"));
        assertShownAsText();
    }

    private void assertShownAsText() {
        WebElement body = browser.findElement(By.cssSelector("article.msg.assistant .body"));
        assertEquals(null, js("return window.__pwned"), "model output ran as script");
        assertTrue(body.findElements(By.cssSelector("img, script, b, [onerror], [onmouseover]")).isEmpty(),
                (String) js("return arguments[0].innerHTML", body));
        List<WebElement> links = body.findElements(By.tagName("a"));
        assertEquals(1, links.size());
        assertEquals("https://example.com/a?b=1", links.get(0).getAttribute("href"));
        String shown = body.getText();
        assertTrue(shown.contains("<img src=x onerror=\"window.__pwned='img'\">"), shown);
        assertTrue(shown.contains("<script>window.__pwned='script'</script>"), shown);
        assertTrue(shown.contains("[click me](javascript:window.__pwned='link')"), shown);
        assertEquals("<b onmouseover=\"window.__pwned='code'\">bold</b>",
                body.findElement(By.cssSelector(".code pre")).getText());
        // an event handler that would have run on hover or load: none did
        new Actions(browser).moveToElement(body.findElement(By.cssSelector(".code pre"))).perform();
        assertEquals(null, js("return window.__pwned"));
        assertNoConsoleErrors();
    }

    // ---- the key, the device, the page turned off ----

    @Test
    void aMissingOrWrongApiKeyIsAskedForAndShown() throws Exception {
        try (PackagedServer keyed = PackagedServer.start(List.of(), "--api-key", KEY)) {
            // the page's files need no key; the API does
            assertEquals(200, keyed.get("/").statusCode());
            assertEquals(200, keyed.get("/webui/app.css").statusCode());
            assertEquals(401, keyed.get("/v1/models").statusCode());
            assertEquals(401, keyed.get("/webui/../v1/models").statusCode());
            assertEquals(401, keyed.post("/", "{}").statusCode());

            browser.get(keyed.base + "/");
            WebElement dialog = browser.findElement(By.id("key-dialog"));
            waitFor(dialog::isDisplayed, "the key to be asked for");
            assertEquals("This server needs an API key.", text("#key-message"));
            browser.findElement(By.id("key-input")).sendKeys("sk-wrong", Keys.ENTER);
            waitFor(() -> text("#key-message").contains("not valid"), "the wrong key to be refused");
            assertEquals("The API key was refused: the API key is not valid.", text("#key-message"));
            assertTrue(dialog.isDisplayed());
            screenshot("api-key-wrong");
            browser.findElement(By.id("key-input")).sendKeys(KEY, Keys.ENTER);
            waitFor(() -> !browser.findElements(By.cssSelector("#model option")).isEmpty(), "the models");
            assertFalse(dialog.isDisplayed());
            assertEquals(KEY, js("return localStorage.getItem('laneway.apiKey')"));

            settings(Map.of("temperature", "0", "max_tokens", "8"));
            type("Hello");
            browser.findElement(By.id("send")).click();
            awaitAnswer();
            assertFalse(lastAnswerText().isBlank());
            waitFor(() -> browser.findElement(By.id("load")).isDisplayed(), "the load, read with the key");
        }
    }

    @Test
    void aFaultingDeviceIsShownAsAMessage() throws Exception {
        // no retries: the step at position 120 fails, the answer with it, and the device is out for two seconds
        try (PackagedServer faulty = PackagedServer.start(List.of("-Dlaneway.faults.retries=0",
                "-Dlaneway.faults.probe-seconds=2"), "--device", "chaos:cpu?fail_at=120:1")) {
            browser.get(faulty.base + "/");
            waitFor(() -> !browser.findElements(By.cssSelector("#model option")).isEmpty(), "the models");
            settings(Map.of("temperature", "0", "max_tokens", "1500"));
            type(LONG_PROMPT);
            browser.findElement(By.id("send")).click();
            awaitAnswer();
            String error = text("article.msg.assistant .error");
            assertTrue(error.startsWith("The device failed while generating this answer"), error);
            assertFalse(lastAnswerText().isBlank(), "the text before the fault stays");
            screenshot("device-fault");

            // at once again: the device is out of service, and the page says when to retry
            tabUntil(() -> "Regenerate".equals(browser.switchTo().activeElement().getText()), true);
            new Actions(browser).sendKeys(Keys.ENTER).perform();
            awaitAnswer();
            String refused = text("article.msg.assistant .error");
            assertTrue(refused.startsWith("The device is out of service after a fault") && refused.contains(
                    "probed again in"), refused);
        }
    }

    @Test
    void noWebuiTurnsThePageOff() throws Exception {
        try (PackagedServer off = PackagedServer.start(List.of(), "--no-webui")) {
            HttpResponse<String> page = off.get("/");
            assertEquals(404, page.statusCode());
            assertEquals("not_found", JSON.readTree(page.body()).at("/error/code").asText());
            assertEquals(404, off.get("/index.html").statusCode());
            assertEquals(404, off.get("/webui/app.js").statusCode());
            assertEquals(200, off.get("/v1/models").statusCode());
        }
    }

    // ---- helpers ----

    private static Object js(String script, Object... args) {
        return ((JavascriptExecutor) browser).executeScript(script, args);
    }

    private static String text(String css) {
        return browser.findElement(By.cssSelector(css)).getText();
    }

    private static String activeId() {
        return browser.switchTo().activeElement().getAttribute("id");
    }

    private static void focus(String id) {
        js("document.getElementById(arguments[0]).focus()", id);
    }

    private static String squeezed(String s) {
        return s.replaceAll("\\s+", " ").strip();
    }

    private static void type(String text) {
        WebElement prompt = browser.findElement(By.id("prompt"));
        prompt.clear();
        prompt.sendKeys(text);
    }

    /** Sets settings through their fields in the settings panel, then closes it. */
    private static void settings(Map<String, String> values) {
        browser.findElement(By.id("open-settings")).click();
        for (Map.Entry<String, String> e : values.entrySet()) {
            WebElement field = browser.findElement(By.id("s-" + e.getKey()));
            field.clear();
            field.sendKeys(e.getValue());
        }
        browser.findElement(By.id("close-settings")).click();
    }

    /** Keeps every chat request body the page sends in window.__requests. */
    private static void recordRequests() {
        js("window.__requests = []; const real = window.fetch; window.fetch = (url, init) => {"
                + " if (String(url).endsWith('/v1/chat/completions')) window.__requests.push(init.body);"
                + " return real(url, init); };");
    }

    /** Waits for the answer in flight to end: the Send button back and no answer streaming. */
    private static void awaitAnswer() {
        waitFor(() -> browser.findElement(By.id("send")).isEnabled()
                && browser.findElements(By.cssSelector("article.msg.streaming")).isEmpty()
                && !browser.findElements(By.cssSelector("article.msg.assistant")).isEmpty(), "the answer");
    }

    /** The last answer's text as shown, read in one step (a streaming answer is redrawn as it grows). */
    private static String lastAnswerText() {
        return (String) js("const b = document.querySelectorAll('article.msg.assistant .body');"
                + " return b.length ? b[b.length - 1].innerText : ''");
    }

    /** An element's text, shown or not (a closed panel's too). */
    private static String textContent(String css) {
        return (String) js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css);
    }

    private static JsonNode conversations() throws Exception {
        return JSON.readTree((String) js("return localStorage.getItem('laneway.conversations')"));
    }

    /** Imports, through the page's Import, a conversation whose answer is this text. */
    private static void importConversation(String title, String answer) throws Exception {
        ObjectNode conversation = JSON.createObjectNode().put("title", title).put("system", "");
        ArrayNode messages = conversation.putArray("messages");
        messages.addObject().put("role", "user").put("content", "Hello");
        messages.addObject().put("role", "assistant").put("content", answer);
        Path file = Files.createTempFile("laneway-import", ".json");
        try {
            Files.writeString(file, JSON.writeValueAsString(Map.of("format", "laneway-conversations", "version", 1,
                    "conversations", List.of(conversation))));
            browser.findElement(By.id("import-file")).sendKeys(file.toAbsolutePath().toString());
            waitFor(() -> title.equals(textContent("#conversations li[aria-current=true] .open")), "the import");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Presses Tab (or Shift+Tab) until the condition holds, at most 40 times. */
    private static void tabUntil(Supplier<Boolean> reached, boolean backwards) {
        Actions keys = new Actions(browser);
        for (int i = 0; i < 40; i++) {
            if (reached.get()) {
                return;
            }
            if (backwards) {
                keys.keyDown(Keys.SHIFT).sendKeys(Keys.TAB).keyUp(Keys.SHIFT).perform();
            } else {
                keys.sendKeys(Keys.TAB).perform();
            }
        }
        throw new AssertionError("Tab never reached it; the focus is on " + browser.switchTo().activeElement()
                .getAttribute("outerHTML"));
    }

    private static void waitFor(Supplier<Boolean> condition, String what) {
        waitFor(browser, condition, what);
    }

    private static void waitFor(Supplier<Boolean> condition, String what, Duration poll) {
        new WebDriverWait(browser, Duration.ofSeconds(30), poll).withMessage("waiting for " + what)
                .until(d -> condition.get());
    }

    private static void waitFor(ChromeDriver driver, Supplier<Boolean> condition, String what) {
        new WebDriverWait(driver, Duration.ofSeconds(30), Duration.ofMillis(20)).withMessage("waiting for " + what)
                .until(d -> condition.get());
    }

    private static double metric(String name, String labels) {
        try {
            return server.metric(name, labels);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void assertNoConsoleErrors() {
        List<LogEntry> errors = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
        assertTrue(errors.isEmpty(), "console errors: " + errors);
    }

    private static void screenshot(String name) throws Exception {
        byte[] png = browser.getScreenshotAs(OutputType.BYTES);
        assertNotNull(png);
        Files.write(SCREENSHOTS.resolve(name + ".png"), png);
    }
}
