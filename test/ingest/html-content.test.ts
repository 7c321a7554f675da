// The HTML parser keeps a page's main content and drops its chrome, for the generators people
// publish documentation with: each page below has the structure (elements, roles, classes, ids)
// its generator writes, around the same content. bench:html measures the same on real Sphinx
// pages against their sources.
import { describe, expect, it } from 'vitest';
import { parseHtml } from '../../dist/ingest/parse/formats/html.js';

const CONTENT = '<p>To copy a file, call shutil.copyfile with the source and the destination.</p>';
const CODE = '<pre>import shutil\nshutil.copyfile("a", "b")</pre>';

/** Parses a page: its headings, its text, and whether the content came through whole. */
function read(html: string) {
  const doc = parseHtml(html);
  const text = doc.blocks.map((b) => b.text).join('\n');
  return { doc, text, headings: doc.blocks.filter((b) => b.kind === 'heading').map((b) => b.text) };
}

function expectContentOnly(html: string, chrome: string[]) {
  const { text, headings, doc } = read(html);
  expect(headings).toContain('How do I copy a file?');
  expect(text).toContain('To copy a file, call shutil.copyfile with the source and the destination.');
  expect(doc.blocks.find((b) => b.kind === 'code')?.text).toBe('import shutil\nshutil.copyfile("a", "b")');
  for (const c of chrome) expect(text, `"${c}" is chrome`).not.toContain(c);
  expect(text).not.toMatch(/[¶§🔗]/u);
}

describe('HTML main content, by generator', () => {
  it('Sphinx (alabaster / classic): related bar, sidebar, footer, ¶ permalinks, line numbers', () => {
    expectContentOnly(
      `<html><head><title>FAQ — Tool 1.0 documentation</title></head><body>
      <div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3><ul><li><a href="genindex.html">index</a></li><li><a href="intro.html">previous</a></li></ul></div>
      <div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
        <section id="how-do-i-copy-a-file"><h1>How do I copy a file?<a class="headerlink" href="#how-do-i-copy-a-file" title="Permalink to this heading">¶</a></h1>
        ${CONTENT}
        <div class="highlight-python notranslate"><div class="highlight"><table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td><td class="code">${CODE}</td></tr></table></div></div>
        </section></div></div></div>
        <div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper"><h3>Table of Contents</h3><p class="topless"><a href="intro.html">Previous topic</a></p><h3>Quick search</h3></div></div>
      </div>
      <div class="footer">&#169; Copyright 2024, The Authors. Created using Sphinx 5.3.0.</div></body></html>`,
      ['Navigation', 'previous', 'Previous topic', 'Quick search', 'Copyright', 'Created using Sphinx', '1\n2'],
    );
  });

  it('Read the Docs theme: side navigation, breadcrumbs, footer buttons', () => {
    expectContentOnly(
      `<body class="wy-body-for-nav"><div class="wy-grid-for-nav">
      <nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-menu wy-menu-vertical"><ul><li class="toctree-l1"><a href="api.html">API Reference</a></li></ul></div></div></nav>
      <section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><div class="wy-nav-content"><div class="rst-content">
        <div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="index.html">Docs</a> &raquo;</li><li>FAQ</li></ul></div>
        <div role="main" class="document" itemscope="itemscope"><div itemprop="articleBody">
          <section id="faq"><h1>How do I copy a file?<a class="headerlink" href="#faq" title="Link to this heading"></a></h1>${CONTENT}<div class="highlight">${CODE}</div></section>
        </div></div>
        <footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href="api.html" class="btn btn-neutral float-right">Next</a></div><p>&#169; Copyright 2024.</p></footer>
      </div></div></section></div></body>`,
      ['API Reference', 'Docs »', 'Next', 'Copyright'],
    );
  });

  it('MkDocs Material: header, sidebars inside <main>, footer with previous / next', () => {
    expectContentOnly(
      `<body><header class="md-header"><nav class="md-header__inner">Tool docs <label class="md-header__button">Search</label></nav></header>
      <div class="md-container"><main class="md-main"><div class="md-main__inner md-grid">
        <div class="md-sidebar md-sidebar--primary"><nav class="md-nav md-nav--primary"><ul class="md-nav__list"><li><a href="../install/">Install</a></li></ul></nav></div>
        <div class="md-sidebar md-sidebar--secondary"><nav class="md-nav md-nav--secondary"><label>Table of contents</label></nav></div>
        <div class="md-content"><article class="md-content__inner md-typeset">
          <h1 id="copy">How do I copy a file?<a class="headerlink" href="#copy" title="Permanent link">¶</a></h1>${CONTENT}${CODE}
        </article></div>
      </div></main>
      <footer class="md-footer"><nav class="md-footer__inner md-grid" aria-label="Footer"><a href="../install/" class="md-footer__link md-footer__link--prev">Previous Install</a></nav><div class="md-copyright">Made with Material for MkDocs</div></footer></div></body>`,
      ['Tool docs', 'Install', 'Table of contents', 'Previous', 'Made with Material'],
    );
  });

  it('Docusaurus: navbar, doc sidebar, breadcrumbs and mobile TOC inside the article, hash links, pagination', () => {
    expectContentOnly(
      `<body><div id="__docusaurus"><div role="region" aria-label="Skip to main content"><a class="skipToContent_fXgn" href="#__docusaurus_skipToContent_fallback">Skip to main content</a></div>
      <nav aria-label="Main" class="navbar navbar--fixed-top"><a class="navbar__brand" href="/">Tool</a><a class="navbar__item" href="/blog">Blog</a></nav>
      <div class="main-wrapper"><div class="docsWrapper"><div class="docRoot">
        <aside class="theme-doc-sidebar-container"><nav aria-label="Docs sidebar" class="menu thin-scrollbar"><ul class="theme-doc-sidebar-menu menu__list"><li><a href="/docs/intro">Intro</a></li></ul></nav></aside>
        <main class="docMainContainer"><div class="container"><div class="row"><div class="col">
          <div class="docItemContainer"><article>
            <nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs"><ul class="breadcrumbs"><li><a href="/">Home</a></li></ul></nav>
            <div class="theme-doc-toc-mobile tocCollapsible"><button type="button">On this page</button></div>
            <div class="theme-doc-markdown markdown"><header><h1>How do I copy a file?</h1></header>${CONTENT}${CODE}
              <h2 id="more">More<a href="#more" class="hash-link" aria-label="Direct link to More" title="Direct link to More">&#8203;</a></h2><p>Use copytree for folders.</p></div>
            <footer class="theme-doc-footer docusaurus-mt-lg"><div class="theme-doc-footer-edit-meta-row"><a href="https://github.com/x/edit/main/docs/faq.md" class="theme-edit-this-page">Edit this page</a></div></footer>
          </article></div>
          <nav class="pagination-nav docusaurus-mt-lg" aria-label="Docs pages"><a class="pagination-nav__link pagination-nav__link--prev" href="/docs/intro"><div class="pagination-nav__sublabel">Previous</div></a></nav>
        </div><div class="col col--3"><div class="tableOfContents_bqdL thin-scrollbar theme-doc-toc-desktop"><ul class="table-of-contents"><li><a href="#more" class="table-of-contents__link toc-highlight">More</a></li></ul></div></div></div></div></main>
      </div></div></div><footer class="footer footer--dark">Copyright © 2024 Tool</footer></div></body>`,
      ['Skip to main content', 'Blog', 'Intro', 'Home', 'On this page', 'Edit this page', 'Previous', 'Copyright'],
    );
    expect(read(`<main><article><h2 id="more">More<a href="#more" class="hash-link">&#8203;</a></h2><p>Text.</p></article></main>`).headings).toEqual(['More']);
  });

  it('Hugo (Docsy): top navbar, sidebar, page TOC, "#" heading anchors', () => {
    expectContentOnly(
      `<body class="td-page"><header><nav class="td-navbar"><a class="navbar-brand" href="/">Tool</a><ul class="navbar-nav"><li><a href="/docs/">Documentation</a></li></ul></nav></header>
      <div class="container-fluid td-outer"><div class="td-main"><div class="row flex-xl-nowrap">
        <aside class="col-12 col-md-3 col-xl-2 td-sidebar d-print-none"><nav class="td-sidebar-nav"><ul><li><a href="/docs/install/">Install</a></li></ul></nav></aside>
        <aside class="d-none d-xl-block col-xl-2 td-sidebar-toc d-print-none"><div class="td-toc"><nav id="TableOfContents"><ul><li><a href="#more">More</a></li></ul></nav></div></aside>
        <main class="col-12 col-md-9 col-xl-8 ps-md-5" role="main"><div class="td-content">
          <h1>How do I copy a file?</h1>${CONTENT}${CODE}<h2 id="more">More <a class="td-heading-self-link" href="#more" aria-label="Heading self-link">#</a></h2><p>Use copytree for folders.</p>
          <div class="td-page-meta__lastmod">Last modified May 1, 2024</div>
        </div></main>
      </div></div><footer class="td-footer row d-print-none">© 2024 The Tool Authors</footer></div></body>`,
      ['Documentation', 'Install', 'The Tool Authors'],
    );
  });

  it('Javadoc: banner navigation, skip links, title header kept, contentinfo footer', () => {
    const { text, headings } = read(
      `<body class="class-declaration-page"><div class="flex-box"><header role="banner" class="flex-header"><nav role="navigation">
        <div class="top-nav" id="navbar-top"><div class="skip-nav"><a href="#skip-navbar-top" title="Skip navigation links">Skip navigation links</a></div>
        <ul id="navbar-top-firstrow" class="nav-list"><li><a href="../package-summary.html">Package</a></li><li class="nav-bar-cell1-rev">Class</li><li><a href="../../index-all.html">Index</a></li></ul></div></nav></header>
      <div class="flex-content"><main role="main"><div class="header"><div class="sub-title">Package <a href="package-summary.html">org.tool</a></div><h1 title="Class Files" class="title">Class Files</h1></div>
        <section class="class-description" id="class-description"><div class="block">Copies files: <code>Files.copy(a, b)</code> copies a to b.</div></section>
      </main><footer role="contentinfo"><p class="legal-copy"><small>Copyright &#169; 2024. All rights reserved.</small></p></footer></div></div></body>`,
    );
    expect(headings).toEqual(['Class Files']);
    expect(text).toContain('Copies files: Files.copy(a, b) copies a to b.');
    for (const c of ['Skip navigation links', 'Index', 'All rights reserved']) expect(text).not.toContain(c);
  });

  it('Doxygen: title area and menu, tree view, path bar, "Generated by doxygen"', () => {
    const { text, headings } = read(
      `<body><div id="top"><div id="titlearea"><table><tr><td><div id="projectname">Tool</div></td></tr></table></div>
        <div id="main-nav"><ul id="main-menu" class="sm sm-dox"><li><a href="index.html">Main Page</a></li><li><a href="annotated.html">Classes</a></li><li><a href="files.html">Files</a></li></ul></div></div>
      <div id="side-nav" class="ui-resizable side-nav-resizable"><div id="nav-tree"><div id="nav-tree-contents"><ul><li><a href="a.html">a</a></li><li><a href="b.html">b</a></li><li><a href="c.html">c</a></li></ul></div></div></div>
      <div id="doc-content"><div class="header"><div class="headertitle"><div class="title">Files Class Reference</div></div></div>
        <div class="contents"><a name="details" id="details"></a><h2 class="groupheader">Detailed Description</h2><div class="textblock"><p>Copies files between folders, keeping their modes.</p></div></div>
        <div id="nav-path" class="navpath"><ul><li class="navelem"><a class="el" href="namespace.html">tool</a></li><li class="footer">Generated by <a href="https://www.doxygen.org/index.html">doxygen</a> 1.9.4</li></ul></div></div></body>`,
    );
    expect(headings).toEqual(['Detailed Description']);
    expect(text).toContain('Files Class Reference');
    expect(text).toContain('Copies files between folders, keeping their modes.');
    for (const c of ['Main Page', 'Classes', 'Generated by', 'doxygen']) expect(text).not.toContain(c);
  });

  it('GitHub: markdown-body with aria-hidden octicon anchors', () => {
    expectContentOnly(
      `<body><div class="application-main"><main><article class="markdown-body entry-content container-lg" itemprop="text">
        <div class="markdown-heading"><h1 class="heading-element">How do I copy a file?</h1><a id="user-content-copy" class="anchor" aria-label="Permalink: How do I copy a file?" href="#copy"><svg class="octicon octicon-link" viewBox="0 0 16 16"></svg></a></div>
        ${CONTENT}<div class="highlight highlight-source-python notranslate position-relative overflow-auto">${CODE}</div>
      </article></main></div></body>`,
      ['Permalink'],
    );
  });

  it('Confluence export: header, breadcrumbs, attachments section, footer', () => {
    expectContentOnly(
      `<body class="theme-default aui-theme-default"><div id="page"><div id="main" class="aui-page-panel">
        <div id="main-header"><div id="breadcrumb-section"><ol id="breadcrumbs"><li class="first"><span><a href="index.html">Tool</a></span></li><li><span><a href="FAQ_1.html">FAQ</a></span></li></ol></div>
          <h1 id="title-heading" class="pagetitle"><span id="title-text">Tool : FAQ</span></h1></div>
        <div id="content" class="view"><div class="page-metadata">Created by Ann, last modified on Jan 01, 2024</div>
          <div id="main-content" class="wiki-content group"><h1 id="FAQ-copy">How do I copy a file?</h1>${CONTENT}<div class="code panel pdl"><div class="codeContent panelContent pdl">${CODE}</div></div></div>
        </div></div>
        <div id="footer" role="contentinfo"><section class="footer-body"><p>Document generated by Confluence on Jan 01, 2024</p></section></div></div></body>`,
      ['FAQ »', 'Created by Ann', 'Document generated by Confluence'],
    );
  });
});

describe('HTML main content, what is content', () => {
  it('a page without a main region: its header, navigation, cookie banner and footer go', () => {
    expectContentOnly(
      `<body><header><a href="/">Home</a> <a href="/blog/">Blog</a></header><div id="cookie-consent" class="cookie-banner"><p>We use cookies to improve your experience.</p><button>Accept</button></div>
      <div class="post"><h1>How do I copy a file?</h1>${CONTENT}${CODE}</div><footer><p>© 2024 Ann's blog</p></footer></body>`,
      ['Home', 'Blog', 'We use cookies', 'Accept', "Ann's blog"],
    );
  });

  it('keeps sections named like chrome, heading links, and lists of links to other sites', () => {
    const { text, headings } = read(
      `<main><section id="cookies"><h2><a class="toc-backref" href="#id3">Cookies</a></h2><p>Set a cookie with the response's cookie jar.</p></section>
      <section id="search"><h2>Search</h2><p>Searches run over every dataset.</p></section>
      <p>Tools that watch files:</p><ul><li><a href="https://www.ossec.net/">OSSEC</a></li><li><a href="https://www.la-samhna.de/samhain/">Samhain</a></li><li><a href="https://github.com/Tripwire/tripwire-open-source">Tripwire</a></li></ul>
      <div class="contents topic"><p class="topic-title">Contents</p><ul><li><a href="#cookies">Cookies</a></li><li><a href="#search">Search</a></li><li><a href="#tools">Tools</a></li></ul></div></main>`,
    );
    expect(headings).toEqual(['Cookies', 'Search']);
    expect(text).toContain("Set a cookie with the response's cookie jar.");
    expect(text).toContain('Searches run over every dataset.');
    expect(text).toContain('OSSEC');
    expect(text).toContain('Tripwire');
    // The in-page table of contents (links into the page) is navigation.
    expect(text.match(/Cookies/g)).toHaveLength(1);
  });

  it('keeps the lines of preformatted code and drops inline line numbers', () => {
    const { doc } = read(`<main><pre><span class="linenos">1</span>for x in y:\n<span class="linenos">2</span>    print(x)</pre></main>`);
    expect(doc.blocks).toEqual([{ kind: 'code', text: 'for x in y:\n    print(x)' }]);
  });

  it('a heading keeps a trailing "#" that is its own (C#), loses one set apart by a theme', () => {
    expect(read('<main><h2>Calling from C#</h2><h2>Install <span>#</span></h2></main>').headings).toEqual(['Calling from C#', 'Install']);
  });
});
