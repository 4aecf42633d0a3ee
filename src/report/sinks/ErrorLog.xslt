<?xml version="1.0" encoding="UTF-8"?>
<!-- Renders a sqliosim (or SQLIOSim) XML error log as a table: Date | Time | TID | User | Description.
     Error rows read "Error: <HRESULT> Error Text: <SYSTEXT> Description: <text>", as SQLIOSim's view. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="html" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html>
      <head>
        <title>sqliosim error log</title>
        <style>
          body { font-family: sans-serif; font-size: 13px; margin: 1em; }
          table { border-collapse: collapse; width: 100%; }
          th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }
          th { background: #333; color: #fff; position: sticky; top: 0; }
          tr.ERROR td { background: #fde2e2; color: #8b0000; font-weight: bold; }
          tr.WARNING td { background: #fff4cc; }
          td.desc { white-space: pre-wrap; }
          .detail { font-weight: normal; color: #333; font-size: 12px; }
        </style>
      </head>
      <body>
        <h1>sqliosim error log</h1>
        <p>
          <xsl:value-of select="count(//ENTRY[@TYPE='ERROR'])"/> error(s),
          <xsl:value-of select="count(//ENTRY[@TYPE='WARNING'])"/> warning(s),
          <xsl:value-of select="count(//ENTRY)"/> entries.
        </p>
        <table>
          <tr><th>Date</th><th>Time</th><th>TID</th><th>User</th><th>Description</th></tr>
          <xsl:apply-templates select="//ENTRY"/>
        </table>
      </body>
    </html>
  </xsl:template>
  <xsl:template match="ENTRY">
    <tr class="{@TYPE}">
      <td><xsl:value-of select="@DATE"/></td>
      <td><xsl:value-of select="@TIME"/></td>
      <td><xsl:value-of select="@TID"/></td>
      <td><xsl:value-of select="@User"/></td>
      <td class="desc">
        <xsl:choose>
          <xsl:when test="@TYPE='ERROR'">Error: <xsl:value-of select="@HRESULT"/> Error Text: <xsl:value-of select="@SYSTEXT"/> Description: <xsl:value-of select="EXTENDED_DESCRIPTION"/></xsl:when>
          <xsl:otherwise><xsl:value-of select="EXTENDED_DESCRIPTION"/></xsl:otherwise>
        </xsl:choose>
        <xsl:if test="FINDING/DUMP">
          <div class="detail">Dump: <xsl:value-of select="FINDING/DUMP"/></div>
        </xsl:if>
      </td>
    </tr>
  </xsl:template>
</xsl:stylesheet>
